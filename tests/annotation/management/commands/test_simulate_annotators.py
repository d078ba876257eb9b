"""simulate_annotators plays participants over real HTTP (the live server) and fills a study."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Participant, Response, StudyItem
from annotation.selectors import items_over_capacity
from tests.annotation.helpers import make_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_simulated_crowd_fills_a_study_over_http(live_server):
    study = make_study(n_instances=8, per_batch=4, k=3, screening=2)
    out = io.StringIO()
    # 14 people for 24 slots of 4-item batches: enough that the study fills even when, on a loaded machine, one
    # arrival meets another's open session (409) and gives up, as a real participant would.
    call_command("simulate_annotators", "--study", study.slug, "--participants", "14", "--accuracy", "0.9",
                 "--screen-fail", "0.3", "--concurrency", "5", "--base-url", live_server.url, "--seed", "3",
                 "--batches-each", "2", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] and summary["answers_stored"] == Response.objects.count()
    assert summary["endpoints"]["answers"]["status"] == {"201": summary["answers_stored"]} or \
        summary["endpoints"]["answers"]["status"] == {201: summary["answers_stored"]}
    assert summary["endpoints"]["next"]["p99_ms"] > 0
    excluded = Participant.objects.filter(study=study, excluded=True).count()
    assert 1 <= excluded <= summary["screen_failers"]
    assert items_over_capacity(study=study) == []
    valid = Response.objects.filter(study=study, is_valid=True, is_screening=False).count()
    assert valid == 8 * 3  # everything filled despite the excluded participants' reopened slots
    assert not StudyItem.objects.filter(study=study, is_closed=True).exists()
