"""Stopping on the posterior (tasks/stel/posterior.py): an adaptive study with a posterior stop closes an item once
the pooled one-coin posterior, computed from the study's stored parameters, reaches the stop threshold (validated)
or can no longer reach it within k answers (dropped); before any fit it is the m-of-k rule; the refit job fits the
parameters on the study's answers once its pilot is decided and rechecks the items' closures."""
from __future__ import annotations

import math

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation.models import Study, StudyItem
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from scoring.agreement.filtering import instances_filter
from scoring.agreement.posterior_fit import posterior_refit
from scoring.celery_tasks import posterior_refit_task
from tasks.stel.majority import m_of_k_final
from tasks.stel.posterior import PosteriorRule, posterior_final, posterior_right, posterior_validated
from tests import factories as f
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db

FIT = {"vote_accuracy": 0.8, "share_gold_right": 0.9}  # logit 0.9 = 2.20, logit 0.8 = 1.39, logit 0.99 = 4.60
RULE = PosteriorRule(stop=0.99, **FIT)


def test_the_posterior_is_the_closed_form_of_the_pooled_one_coin_model():
    # Bayes by hand: prior 0.9, two agreeing answers of accuracy 0.8
    right, wrong = 0.9 * 0.8 * 0.8, 0.1 * 0.2 * 0.2
    assert math.isclose(posterior_right(2, 0, rule=RULE), right / (right + wrong))
    assert math.isclose(posterior_right(3, 1, rule=RULE), posterior_right(2, 0, rule=RULE))


@given(st.integers(0, 5), st.integers(0, 5))
def test_without_a_fit_the_rule_is_m_of_k(correct, wrong):
    if correct + wrong > 5:
        return
    unfitted = PosteriorRule(stop=0.99)
    for rule in (None, unfitted, PosteriorRule(stop=0.99, vote_accuracy=0.5, share_gold_right=0.9)):
        assert bool(posterior_final(correct, wrong, k=5, m=3, rule=rule)) == bool(m_of_k_final(correct, wrong, 5, 3))
        assert bool(posterior_validated(correct, wrong, m=3, rule=rule)) == (correct >= 3)


@given(st.integers(0, 5), st.integers(0, 5))
def test_the_fitted_rule_validates_only_above_the_stop_and_ends_by_k(correct, wrong):
    if correct + wrong > 5:
        return
    final = bool(posterior_final(correct, wrong, k=5, m=3, rule=RULE))
    validated = bool(posterior_validated(correct, wrong, m=3, rule=RULE))
    assert validated == (posterior_right(correct, wrong, rule=RULE) >= 0.99)
    if validated or correct + wrong == 5:
        assert final
    if not final:  # still open: the stop can still be reached
        assert posterior_right(correct + 5 - correct - wrong, wrong, rule=RULE) >= 0.99


def test_the_settings_are_checked_and_name_their_field():
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(posterior_stop=0.99)
    assert refused.value.field == "posterior_stop" and "adaptive" in refused.value.message
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(adaptive=True, posterior_stop=1.0)
    assert refused.value.field == "posterior_stop"
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(adaptive=True, posterior_drop=0.1)
    assert refused.value.field == "posterior_drop"
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(adaptive=True, posterior_stop=0.6, posterior_drop=0.5 + 0.1)
    assert refused.value.field == "posterior_drop"
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(posterior_pilot_items=3)
    assert refused.value.field == "posterior_pilot_items"
    built = study_settings_build(adaptive=True, posterior_stop=0.99, posterior_drop=0.2, posterior_pilot_items=50)
    assert (built.posterior_stop, built.posterior_drop, built.posterior_pilot_items) == (0.99, 0.2, 50)


def _answers(study: Study, pattern: list[bool]) -> list[bool]:
    """Participants answer the study's one item in turn through the participant API; its closure after each."""
    client = APIClient()
    closed = []
    item = StudyItem.objects.get(study=study)
    for n, correct in enumerate(pattern):
        p = P(client, study.slug, f"A{n}")
        p.start()
        p.consent()
        p.play(correct=correct)
        item.refresh_from_db()
        closed.append(item.is_closed)
    return closed


@pytest.mark.slow  # the participant flow over HTTP, several participants
@pytest.mark.parametrize(("pattern", "closes_at", "decision"), [
    ([True, True], 2, "validated"),  # c − w = 2: P = 0.994 ≥ 0.99 (3 of 5 would ask a third)
    ([False, True, True, True], 4, "validated"),  # 3–1: c − w = 2
    ([False, False], 2, "rejected"),  # 0–2: even 3 more agreeing answers reach only c − w = 1 (P = 0.97)
])
def test_items_stop_at_the_answer_count_the_stored_parameters_give(pattern, closes_at, decision):
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True, slug="posterior", posterior_stop=0.99)
    Study.objects.filter(pk=study.pk).update(posterior_fit=FIT)
    closed = _answers(study, pattern)
    assert closed == [False] * (closes_at - 1) + [True]
    run = instances_filter(study=study, min_correct=3)
    assert (run.n_validated, run.n_rejected, run.n_incomplete) == (
        (1, 0, 0) if decision == "validated" else (0, 1, 0))


@pytest.mark.slow  # the participant flow over HTTP, several participants
def test_without_a_fit_the_study_stops_by_m_of_k():
    study = make_study(n_instances=1, per_batch=1, k=5, m=3, adaptive=True, slug="unfitted", posterior_stop=0.99)
    assert study.posterior_fit == {}
    assert _answers(study, [True, True, True]) == [False, False, True]


def test_the_refit_job_waits_for_the_pilot_then_stores_the_parameters_and_rechecks_closures():
    study = f.StudyFactory(adaptive_stopping=True, posterior_stop=0.99, posterior_pilot_items=4,
                           annotators_per_item=5, min_correct=3)
    correct, wrong = "S2-S1", "S1-S2"
    # three items with their 5 answers (decided), one with two agreeing answers (open)
    f.annotated_study(study=study, answers=[[correct] * 5, [correct] * 4 + [wrong], [correct] * 3 + [wrong] * 2])
    _, (open_item,) = f.annotated_study(study=study, answers=[[correct, correct]])
    waiting = posterior_refit(study=study)
    assert waiting["fitted"] is False and "3 of 4 items decided" in waiting["reason"]
    study.refresh_from_db()
    assert study.posterior_fit == {}
    f.annotated_study(study=study, answers=[[correct] * 5])
    done = posterior_refit_task()  # what celery beat runs: every active adaptive study with a posterior stop
    assert [d["study"] for d in done] == [study.slug] and done[0]["fitted"] is True
    study.refresh_from_db()
    fit = study.posterior_fit
    assert 0.5 < fit["vote_accuracy"] < 1 and 0 < fit["share_gold_right"] <= 1
    assert fit["items"] == 5 and fit["answers"] == 22 and fit["fitted_at"] and "validates_at_margin" in fit
    rule = PosteriorRule(stop=0.99, vote_accuracy=fit["vote_accuracy"], share_gold_right=fit["share_gold_right"])
    open_item.refresh_from_db()
    assert open_item.is_closed == bool(rule.fitted and posterior_final(2, 0, k=5, m=3, rule=rule))
    assert "scoring.posterior_refit" in {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}


def test_a_refit_with_new_parameters_reopens_an_item_they_no_longer_decide():
    study = f.StudyFactory(adaptive_stopping=True, posterior_stop=0.99, posterior_pilot_items=1,
                           annotators_per_item=5, min_correct=3)
    _, (item,) = f.annotated_study(study=study, answers=[["S2-S1", "S2-S1"]])
    StudyItem.objects.filter(pk=item.pk).update(is_closed=True)  # closed under an earlier, more confident fit
    # the data: many 3-2 splits, so the fitted accuracy is low and two agreeing answers no longer pass 0.99
    f.annotated_study(study=study, answers=[["S2-S1"] * 3 + ["S1-S2"] * 2] * 6)
    summary = posterior_refit(study=study)
    item.refresh_from_db()
    rule = PosteriorRule(stop=0.99, vote_accuracy=summary["vote_accuracy"],
                         share_gold_right=summary["share_gold_right"])
    assert not rule.fitted or posterior_right(2, 0, rule=rule) < 0.99
    assert not item.is_closed and summary["closures_changed"] >= 1


def test_the_filter_follows_the_fitted_posterior_says_so_and_refuses_an_m_it_would_not_apply():
    study = f.StudyFactory(adaptive_stopping=True, posterior_stop=0.99, annotators_per_item=5, min_correct=3)
    correct, wrong = "S2-S1", "S1-S2"
    # 3–2: c − w = 1, P = 0.973 < 0.99 (3 of 5 would validate it); 4–1: c − w = 3, P = 0.9995
    f.annotated_study(study=study, answers=[[correct] * 3 + [wrong] * 2, [correct] * 4 + [wrong]])
    Study.objects.filter(pk=study.pk).update(posterior_fit={**FIT, "fitted_at": "2026-11-29T06:00:00+00:00"})
    study.refresh_from_db()
    with pytest.raises(ApplicationError) as refused:
        instances_filter(study=study, min_correct=2)
    assert refused.value.details == {"field": "min_correct"} and "posterior stop" in str(refused.value)
    run = instances_filter(study=study)
    assert (run.n_validated, run.n_rejected) == (1, 1)
    rule = run.statistics["rule"]
    assert "posterior P(gold right) is at least 0.99" in rule and "vote accuracy 0.8000" in rule
    assert "2026-11-29T06:00:00" in rule
    # the same study before any fit: m of k, and its rule says so
    Study.objects.filter(pk=study.pk).update(posterior_fit={})
    study.refresh_from_db()
    assert instances_filter(study=study, min_correct=2).statistics["rule"].startswith(
        "validated when at least 2 of the first 5")
