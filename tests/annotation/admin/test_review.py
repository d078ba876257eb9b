"""Review of rewrites end to end on PostgreSQL: real sources → a rewrite study with k = 2 →
writers over HTTP (one copying the source, refused) → reviewers accept/reject with reasons in the admin queue,
one writer blocked → reopened slots filled by others → exactly k accepted rewrites per source → a corpus with
splits → quadruples → a STEL TSV whose pairs trace back to accepted rewrites only; feedback, qualification and
the platform decisions on the way."""
from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Response, RewriteReview, Study
from annotation.services.exports import decisions_serialize
from annotation.services.review import worker_rates
from scoring.export.services import benchmark_export
from tasks.models import Corpus, ParallelPair, TaskInstance
from tasks.services.generation import instances_generate
from tests.annotation.helpers import Participant as Person
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db
DECIDE = "/admin/annotation/rewritereview/queue/decide/"


def command(name: str, *args: str) -> dict[str, Any]:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def start(slug: str, pid: str) -> tuple[Person, Any]:
    person = Person(APIClient(), slug, pid)
    response = person.client.post(f"/api/v1/studies/{slug}/sessions/", {"participant": pid, "platform": "prolific"},
                                  format="json")
    if response.status_code in (200, 201):
        person.token = response.json()["token"]
    return person, response


def write(slug: str, pid: str, rewrite_for: Any, *, copy_first: bool = False) -> int:
    """A writer through the JSON API: persona questions, then every item; `copy_first` sends the source first."""
    person, response = start(slug, pid)
    assert response.status_code == 201, response.content
    if person.consent()["state"] == "eligibility":
        answered = person.client.post(f"/api/v1/sessions/{person.token}/eligibility/", {"answers": {"age": "25-34"}},
                                      format="json")
        assert answered.status_code == 200, answered.content
    written = 0
    while (item := person.next().json()["item"]) is not None:
        if copy_first:
            refused = person.answer(item["id"], item["texts"]["source"])
            assert refused.status_code == 400 and "identical" in refused.json()["error"]["message"]
        stored = person.answer(item["id"], rewrite_for(item["texts"]["source"]))
        assert stored.status_code == 201, stored.content
        written += 1
    return written


def reviewer(name: str) -> Client:
    user = User.objects.create_user(name, password="x", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["change_rewritereview", "view_rewritereview"]))
    client = Client()
    client.force_login(user)
    return client


def decide(client: Client, response_id: int, decision: str, reason: str = "", text: str = "") -> Any:
    return client.post(DECIDE, json.dumps({"response": response_id, "decision": decision, "reason": reason,
                                           "reason_text": text}), content_type="application/json")


def formal(pid: str) -> Any:
    """A writer's rewrite: different enough from the source not to be a copy, and different between writers."""
    return lambda source: f"{pid.upper()} states formally: " + " ".join(reversed(source.split()))


def of(pid: str) -> list[Response]:
    return list(Response.objects.filter(participant__external_id=pid, study__slug="rw").order_by("pk"))


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_rewrite_study_review_block_reopen_corpus_export(shared_data: Path, tmp_path: Path) -> None:
    summary = command("create_study", "--slug", "rw", "--kind", "rewrite", "--sources",
                      str(shared_data / "stel" / "nsubs_sentences.txt"), "--target-style", "formal",
                      "--annotators-per-item", "2", "--items-per-batch", "100", "--max-batches", "2",
                      "--eligibility", "none", "--persona", "age", "--rewrite-max-length", "300")
    n = summary["items"]
    assert n > 5 and summary["dropped"]["question"] > 0
    assert write("rw", "w1", formal("w1")) == n
    assert write("rw", "w3", lambda s: "Something else entirely was said here, " + s[:3], copy_first=True) == n
    assert_api_error(start("rw", "w4")[1], code="no_work_available", status=409)  # k = 2 slots held everywhere

    r1, r2 = reviewer("r1"), reviewer("r2")
    outsider = Client()
    outsider.force_login(User.objects.create_user("nobody", password="x", is_staff=True))
    assert decide(outsider, of("w1")[0].pk, "accept").status_code == 403
    assert outsider.get("/admin/annotation/rewritereview/queue/").status_code == 403
    page = r1.get("/admin/annotation/rewritereview/queue/?study=rw")
    assert page.status_code == 200 and page.content.count(b'class="rq-row') == 2 * n
    for response in of("w1"):
        assert decide(r1, response.pk, "accept").status_code == 200
    w3 = of("w3")
    bad = decide(r2, w3[0].pk, "reject")
    assert bad.status_code == 400 and bad.json()["error"]["details"]["reason"]
    assert decide(r2, w3[0].pk, "reject", "other").json()["error"]["details"]["reason_text"] == ["required"]
    assert decide(r2, w3[0].pk, "reject", "meaning").status_code == 200
    assert decide(r1, w3[0].pk, "accept").status_code == 409  # one decision per rewrite, whoever comes second
    for response in w3[1:-1]:
        assert decide(r2, response.pk, "reject", "copied").status_code == 200

    blocked = r1.post("/admin/annotation/rewritereview/queue/block/", {"worker": "prolific:w3", "reason": "poor"})
    assert blocked.status_code == 302
    last = RewriteReview.objects.get(response=w3[-1])
    assert last.flagged and last.status == "pending"  # their pending rewrite flagged for review
    assert review_queue_first(r1) == w3[-1].pk  # flagged rewrites come first in the queue
    refused = start("rw", "w3")[1]
    assert_api_error(refused, code="blocked", status=403)
    assert decide(r1, w3[-1].pk, "reject", "style").status_code == 200

    # The rejected rewrites reopened their slots: another writer fills them.
    assert write("rw", "w4", formal("w4")) == n
    w4 = of("w4")
    for response in w4[:-1]:
        assert decide(r2, response.pk, "accept").status_code == 200
    assert decide(r2, w4[-1].pk, "reject", "other", "added a greeting").status_code == 200
    assert write("rw", "w5", formal("w5")) == 1
    assert decide(r1, of("w5")[0].pk, "accept").status_code == 200
    assert_api_error(start("rw", "w6")[1], code="no_work_available", status=409)  # k accepted everywhere: full

    study = Study.objects.get(slug="rw")
    accepted = RewriteReview.objects.filter(response__study=study, status="accepted")
    per_item: dict[int, int] = {}
    for item_id in accepted.values_list("response__study_item_id", flat=True):
        per_item[item_id] = per_item.get(item_id, 0) + 1
    assert len(per_item) == n and set(per_item.values()) == {2}  # exactly k accepted per source
    assert set(accepted.values_list("reviewer__username", flat=True)) == {"r1", "r2"}
    rates = {row["participant"]: row for row in worker_rates(study=study)}
    assert rates["w1"]["rate"] == 1.0 and rates["w3"]["rate"] == 0.0 and rates["w3"]["blocked"]
    assert rates["w4"]["accepted"] == n - 1 and rates["w4"]["rejected"] == 1

    decisions = list(csv.DictReader(io.StringIO(decisions_serialize(study=study, fmt="prolific"))))
    by_pid = {row["participant_id"]: row for row in decisions}
    assert by_pid["w1"]["decision"] == "approve"
    assert by_pid["w3"]["decision"] == "reject" and by_pid["w3"]["rejection_category"] == "LOW_EFFORT"
    assert "meaning changed" in by_pid["w3"]["reason"]

    # An expert-only follow-up (GYAFC's tune/test): at least n-1 accepted rewrites at ≥ 80 % acceptance.
    command("create_study", "--slug", "experts", "--kind", "rewrite", "--sources",
            str(shared_data / "stel" / "nsubs_sentences.txt"), "--eligibility", "none",
            "--qualify-min-accepted", str(n - 1), "--qualify-min-rate", "0.8")
    assert_api_error(start("experts", "w5")[1], code="not_qualified", status=403)
    admitted, body = start("experts", "w4")
    assert body.status_code == 201
    feedback = body.json()["feedback"]  # w4's rejection, shown on their next visit
    assert [(f["reason"], f["note"]) for f in feedback] == [("other", "added a greeting")]
    assert admitted.client.get(f"/api/v1/sessions/{admitted.token}/").json()["feedback"] == feedback  # on reload
    assert start("experts", "w1")[1].status_code == 201

    built = command("build_corpus_from_rewrites", "--study", "rw", "--name", "rw-corpus", "--component",
                    "formality", "--seed", "3", "--splits", "0.6,0.2,0.2")
    assert built["pairs"] == 2 * n
    pairs = list(ParallelPair.objects.filter(corpus__name="rw-corpus"))
    accepted_ids = set(accepted.values_list("response_id", flat=True))
    assert {p.metadata["response"] for p in pairs} == accepted_ids
    assert all(p.metadata["review"]["status"] == "accepted" and p.metadata["review"]["reviewer"] in ("r1", "r2")
               for p in pairs)
    # Two writers answered age 25-34: fewer than k = 5 people, so a released corpus withholds it (core.anonymity)
    # and says how many it withheld.
    assert all(p.metadata["writer"]["persona"] == {} and p.metadata["writer"]["participant"].startswith("ps-")
               for p in pairs)
    review = Corpus.objects.get(name="rw-corpus").import_params["review"]  # the card's record of the review
    assert review["statuses"]["accepted"] == 2 * n and review["statuses"]["rejected"] == rejected_texts_count()
    assert review["reviewers"] == ["r1", "r2"] and set(review["rejection_reasons"]) >= {"meaning"}
    run = instances_generate(corpus=Corpus.objects.get(name="rw-corpus"), setup="quadruple", seed=1)
    assert TaskInstance.objects.filter(generation_run=run).exists()
    out = tmp_path / "rw.tsv"
    benchmark_export(fmt="stel-tsv", out=out, corpus="rw-corpus")
    accepted_texts = set(Response.objects.filter(pk__in=accepted_ids).values_list("answer", flat=True))
    rejected_texts = set(Response.objects.filter(review__status="rejected").values_list("answer", flat=True))
    sources = set(study.items.values_list("payload__source", flat=True))
    rows = list(csv.DictReader(out.open(encoding="utf-8"), delimiter="\t"))
    assert rows
    for row in rows:
        texts = {row["Anchor 1"], row["Anchor 2"], row["Alternative 1.1"], row["Alternative 1.2"]}
        assert texts <= accepted_texts | sources and not texts & rejected_texts
        assert texts & accepted_texts


def rejected_texts_count() -> int:
    return Response.objects.filter(review__status="rejected").count()


def review_queue_first(client: Client) -> int:
    page = client.get("/admin/annotation/rewritereview/queue/?study=rw").content.decode()
    return int(page.split('data-response="', 1)[1].split('"', 1)[0])


def test_the_block_form_offers_the_platforms_not_free_text(admin_client) -> None:
    from django.urls import reverse

    from annotation.models import WorkerBlock

    add = reverse("admin:annotation_workerblock_add")
    page = admin_client.get(add).content.decode()
    assert '<select name="platform"' in page and '<option value="prolific">Prolific</option>' in page
    assert '<option value="mturk">Amazon Mechanical Turk</option>' in page
    refused = admin_client.post(add, {"platform": "prolfic", "external_id": "60a0000000000000000000a1"})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert not WorkerBlock.objects.exists()
    saved = admin_client.post(add, {"platform": "prolific", "external_id": "60a0000000000000000000a1"})
    assert saved.status_code == 302 and WorkerBlock.objects.get().platform == "prolific"
