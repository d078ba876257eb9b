"""The demo's rewrite loop (Makefile demo-rewrites): simulated writers over real HTTP (the live server) fill a rewrite
study, some first pasting the source (refused), some sloppy; review_rewrites --auto rejects the sloppy rewrites
through the review service, their slots reopen, a second round fills them; exactly k accepted per source."""
from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Participant, Response, RewriteReview, Study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SOURCES = ["lol i dunno what ur talking about tbh", "that movie was sooo boring, i fell asleep like twice",
           "gonna grab some food later wanna come with me", "my phone died again so i couldnt call u back",
           "this song is stuck in my head all day long", "we should totally go to the beach this weekend"]


def run(name: str, *args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command(name, *args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_simulated_writers_auto_review_and_reopened_slots(live_server, tmp_path) -> None:  # noqa: ANN001
    sources = tmp_path / "sources.txt"
    sources.write_text("\n".join(SOURCES))
    run("create_study", "--slug", "sim-rw", "--kind", "rewrite", "--sources", str(sources), "--target-style",
        "formal", "--annotators-per-item", "2", "--items-per-batch", "6", "--eligibility", "none",
        "--persona", "age,gender")
    first = run("simulate_annotators", "--study", "sim-rw", "--participants", "4", "--copy-rate", "0.5",
                "--sloppy-rate", "0.5", "--concurrency", "2", "--seed", "4", "--base-url", live_server.url)
    assert first["answers_stored"] == 12 and first["copies_refused"] > 0 and "copies_stored" not in first
    assert 1 <= first["sloppy_writers"] <= 3
    sloppy = Response.objects.filter(study__slug="sim-rw", answer__endswith="something or other, whatever.").count()
    assert 0 < sloppy < 12
    reviewed = run("review_rewrites", "--study", "sim-rw", "--auto")
    assert reviewed == {"ok": True, "study": "sim-rw", "reviewed": 12, "accepted": 12 - sloppy, "rejected": sloppy}
    rejected = RewriteReview.objects.filter(status="rejected")
    assert set(rejected.values_list("reason", flat=True)) == {"meaning"}
    assert all("whatever" in r.response.answer for r in rejected.select_related("response"))

    second = run("simulate_annotators", "--study", "sim-rw", "--participants", "4", "--concurrency", "2",
                 "--seed", "5", "--base-url", live_server.url)
    assert second["answers_stored"] == sloppy  # exactly the reopened slots
    assert run("review_rewrites", "--study", "sim-rw", "--accept-all")["rejected"] == 0
    study = Study.objects.get(slug="sim-rw")
    accepted = Response.objects.filter(study=study, review__status="accepted")
    assert sorted(accepted.values_list("study_item__external_id", flat=True)) == sorted(
        [str(n) for n in range(1, 7)] * 2)
    personas = list(Participant.objects.filter(study=study).values_list("persona", flat=True))
    assert all(set(p) == {"age", "gender"} for p in personas)
    with pytest.raises(CommandError, match="no study"):
        run("review_rewrites", "--study", "nope", "--accept-all")
