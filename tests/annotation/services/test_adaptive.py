"""annotation.services.adaptive: stop serving an item once its m-of-k decision (tasks.stel.majority)
can no longer change; reopen on exclusion."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation.models import Participant, StudyItem
from annotation.selectors import study_adaptive_savings, study_progress
from annotation.services.adaptive import item_decision_final
from annotation.services.answers import participant_exclude
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study


@given(k=st.integers(1, 9), data=st.data())
def test_decision_final_exactly_when_no_completion_changes_it(k, data):
    m = data.draw(st.integers(1, k))
    correct = data.draw(st.integers(0, k))
    wrong = data.draw(st.integers(0, k - correct))
    remaining = k - correct - wrong
    outcomes = {correct + extra >= m for extra in range(remaining + 1)}  # every way the rest could vote
    assert item_decision_final(correct=correct, wrong=wrong, k=k, m=m) == (len(outcomes) == 1)


@pytest.mark.django_db
def test_item_closes_after_three_correct_of_five_and_reopens_on_exclusion():
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True)
    client = APIClient()
    players = []
    for i in range(3):
        p = P(client, study.slug, f"A{i}")
        p.start()
        p.consent()
        p.play(correct=True)
        players.append(p)
    item = StudyItem.objects.get(study=study)
    assert item.is_closed
    assert study_adaptive_savings(study=study) == {"closed_items": 1, "annotations_saved": 2}
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": "late", "platform": "prolific"},
                    format="json")
    assert r.status_code == 409  # nothing left to serve
    participant_exclude(participant=Participant.objects.get(external_id="A0"), reason="manual")
    item.refresh_from_db()
    assert not item.is_closed  # 2 valid correct answers: the decision is open again
    p = P(client, study.slug, "late")
    p.start()
    p.consent()
    assert len(p.play(correct=True)) == 1
    item.refresh_from_db()
    assert item.is_closed
    assert study_progress(study=study)["items_closed_early"] == 1


@pytest.mark.django_db
def test_item_closes_when_validation_is_out_of_reach():
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True)
    client = APIClient()
    for i in range(3):
        p = P(client, study.slug, f"W{i}")
        p.start()
        p.consent()
        p.play(correct=False)
        if i < 2:
            assert not StudyItem.objects.get(study=study).is_closed
    assert StudyItem.objects.get(study=study).is_closed  # 3 wrong of 5: at most 2 correct, never 3


@pytest.mark.django_db
def test_non_adaptive_study_collects_all_k():
    study = make_study(n_instances=1, per_batch=1, k=4, m=3, adaptive=False)
    client = APIClient()
    for i in range(4):
        p = P(client, study.slug, f"N{i}")
        p.start()
        p.consent()
        assert len(p.play()) == 1
    assert not StudyItem.objects.get(study=study).is_closed
