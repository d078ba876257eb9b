"""A model guide for adaptive stopping: an item closes once its first `guide_stop_after` valid human answers all
equal the answer the model gave in every order; otherwise the plain adaptive rule (and k) applies. The filter
decides such items on their human answers."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation.models import Participant, Response, StudyItem
from annotation.selectors import study_adaptive_savings
from annotation.services.adaptive import guide_agrees
from annotation.services.answers import participant_exclude
from annotation.services.guidance import study_guide_clear, study_guide_set
from core.errors import ApplicationError
from scoring.agreement.filtering import instances_filter
from scoring.models import ModelRun
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study
from tests.scoring.fake_openai import FakeOpenAI, first_choice

pytestmark = pytest.mark.django_db


@given(st.lists(st.sampled_from(["S1", "S2"]), max_size=6), st.sampled_from(["", "S1", "S2"]),
       st.integers(0, 5))
def test_guide_agrees_exactly_when_the_first_answers_all_equal_the_guide(answers, guide, stop_after):
    expected = bool(guide) and stop_after > 0 and len(answers) >= stop_after and set(answers[:stop_after]) <= {guide}
    assert guide_agrees(first_answers=answers, guide_answer=guide, stop_after=stop_after or None) == expected


def _cli(*args: str) -> dict:
    out = io.StringIO()
    call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _play(client: APIClient, slug: str, pid: str, correct: bool) -> None:
    p = P(client, slug, pid)
    p.start()
    p.consent()
    p.play(correct=correct)


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_items_stop_after_two_answers_agreeing_with_a_consistent_model_and_are_decided():
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True, slug="guided")
    with FakeOpenAI() as fake:
        summary = _cli("--study", "guided", "--base-url", fake.base_url, "--model", "fake-model", "--guide",
                       "--stop-after", "2", "--json")
    assert summary["guide"]["items_with_guide"] == 1 and summary["guide"]["stop_after"] == 2
    item = StudyItem.objects.get(study=study)
    assert item.guide_answer == item.correct_answer
    client = APIClient()
    _play(client, "guided", "A0", True)
    item.refresh_from_db()
    assert not item.is_closed
    _play(client, "guided", "A1", True)
    item.refresh_from_db()
    assert item.is_closed  # 2 agreeing answers, not 3: the guide's agreement stopped it
    assert study_adaptive_savings(study=study) == {"closed_items": 1, "annotations_saved": 3}
    run = instances_filter(study=study, min_correct=3)
    assert (run.n_validated, run.n_incomplete) == (1, 0)
    # an excluded participant's answer no longer counts: the item reopens
    participant_exclude(participant=Participant.objects.get(external_id="A0"), reason="manual")
    item.refresh_from_db()
    assert not item.is_closed


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_a_first_answer_against_the_guide_keeps_the_plain_rule():
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True, slug="against")
    with FakeOpenAI() as fake:
        _cli("--study", "against", "--base-url", fake.base_url, "--model", "fake-model", "--guide", "--json")
    client = APIClient()
    for n, correct in enumerate([False, True, True]):
        _play(client, "against", f"B{n}", correct)
    item = StudyItem.objects.get(study=study)
    assert not item.is_closed  # 1 wrong, 2 right: neither the guide nor m = 3 settles it
    _play(client, "against", "B3", True)
    item.refresh_from_db()
    assert item.is_closed and Response.objects.filter(study_item=item).count() == 4


def test_an_order_sensitive_model_guides_nothing():
    study = make_study(n_instances=2, per_batch=2, k=5, m=3, adaptive=True, slug="biased")
    with FakeOpenAI(first_choice) as fake:
        summary = _cli("--study", "biased", "--base-url", fake.base_url, "--model", "fake-model", "--guide",
                       "--json")
    assert summary["guide"]["items_with_guide"] == 0 and summary["guide"]["order_sensitive_or_unanswered"] == 2
    assert set(StudyItem.objects.filter(study=study).values_list("guide_answer", flat=True)) == {""}


def test_guide_needs_an_adaptive_study_and_a_sensible_count():
    fixed = make_study(n_instances=1, k=5, m=3, slug="fixed")
    with pytest.raises(ApplicationError) as caught:
        study_guide_set(study=fixed, answers={}, stop_after=2, source="x")
    assert caught.value.code == "not_adaptive"
    adaptive = make_study(n_instances=1, k=5, m=3, adaptive=True, slug="adaptive", one_corpus=True)
    for bad in (0, 6, True):
        with pytest.raises(ApplicationError) as caught:
            study_guide_set(study=adaptive, answers={}, stop_after=bad, source="x")
        assert caught.value.code == "invalid_stop_after"
    item = StudyItem.objects.get(study=adaptive)
    study_guide_set(study=adaptive, answers={item.pk: "S2-S1"}, stop_after=1, source="model run #1 (m)")
    study_guide_clear(study=adaptive)
    adaptive.refresh_from_db()
    assert adaptive.guide_stop_after is None and StudyItem.objects.get(pk=item.pk).guide_answer == ""
    assert not ModelRun.objects.exists()


@given(k=st.integers(1, 9), data=st.data())
def test_the_filter_decides_a_closed_item_as_its_stopping_rule_settled_it(k, data):
    """A closed item the m-of-k rule settled gets the decision every completion would give; one the guide closed
    (unanimous first answers, not settled) is validated when they were all correct, rejected when all wrong."""
    import numpy as np

    from scoring.agreement.stats.votes import decide

    m = data.draw(st.integers(1, k))
    n_used = data.draw(st.integers(1, k - 1)) if k > 1 else 1
    n_correct = data.draw(st.integers(0, n_used))
    settled = n_correct >= m or n_used - n_correct > k - m
    unanimous = n_correct in (0, n_used)
    got = decide(complete=np.array([n_used >= k]), has_correct=np.array([True]), n_correct=np.array([n_correct]),
                 m=m, closed=np.array([True]), n_used=np.array([n_used]), k=k)[0]
    if n_used >= k:
        assert got == ("validated" if n_correct >= m else "rejected")
    elif settled:
        assert got == ("validated" if n_correct >= m else "rejected")
    elif unanimous:
        assert got == ("validated" if n_correct == n_used else "rejected")
    else:
        assert got == "incomplete"
    open_item = decide(complete=np.array([False]), has_correct=np.array([True]), n_correct=np.array([n_correct]),
                       m=m, closed=np.array([False]), n_used=np.array([n_used]), k=k)[0]
    if n_used < k:  # not closed: fewer than k answers decide nothing
        assert open_item == "incomplete"
