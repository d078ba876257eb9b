"""Adaptive collection: an item closes once the m-of-k decision can no longer change (tasks.stel.majority), or, in a
study with a posterior stop, once the pooled one-coin posterior decides it (tasks.stel.posterior, on the parameters the
refit job stored: arithmetic only), or, with a guide, once its first answers all agree with the guide's."""
from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from annotation.models import Response, StudyItem
from tasks.models import InstanceStatus, TaskInstance
from tasks.stel.majority import m_of_k_final
from tasks.stel.posterior import PosteriorRule, posterior_final, posterior_rule_of


def item_decision_final(*, correct: int, wrong: int, k: int, m: int) -> bool:
    """True when no further answers can change the m-of-k decision (validated already, or out of reach)."""
    return bool(m_of_k_final(correct, wrong, k, m))


def study_posterior_rule(study: Any) -> PosteriorRule | None:
    """The study's posterior rule (None: m of k), from its settings and stored fit."""
    return posterior_rule_of(stop=study.posterior_stop, drop=study.posterior_drop, fit=study.posterior_fit)


def item_stop_final(*, correct: int, wrong: int, k: int, m: int, rule: PosteriorRule | None) -> bool:
    """True when the item asks for no further answer: the posterior rule where the study has one and it is fitted,
    else the m-of-k decision can no longer change."""
    return bool(posterior_final(correct, wrong, k=k, m=m, rule=rule))


def guide_agrees(*, first_answers: list[str], guide_answer: str, stop_after: int | None) -> bool:
    """The guided stop: the item's first `stop_after` valid human answers (in time order) are all the guide's
    answer. A guide that was order-sensitive or gave no answer has no guide answer, and never stops an item."""
    return bool(stop_after and guide_answer and len(first_answers) >= stop_after
                and all(answer == guide_answer for answer in first_answers[:stop_after]))


def item_refresh_closed(*, item: StudyItem) -> bool:
    """Recompute `is_closed` from the item's valid responses (adaptive studies only); returns the new value.

    Closed when the m-of-k decision can no longer change, or, where the study has a guide, when the first
    `guide_stop_after` valid answers all equal the item's guide answer. An item whose instance was withdrawn (its
    writer's data erased) stays closed whatever the study."""
    study = item.study
    if not study.adaptive_stopping or not item.correct_answer:
        closed = False
    else:
        valid = Response.objects.filter(study_item=item, is_valid=True)
        counts = valid.aggregate(
            correct=Count("id", filter=Q(is_correct=True)), wrong=Count("id", filter=Q(is_correct=False))
        )
        closed = item_stop_final(correct=counts["correct"], wrong=counts["wrong"], k=study.annotators_per_item,
                                 m=study.min_correct, rule=study_posterior_rule(study))
        if not closed and study.guide_stop_after and item.guide_answer:
            first = list(valid.order_by("answered_at", "id").values_list("answer", flat=True)[:study.guide_stop_after])
            closed = guide_agrees(first_answers=first, guide_answer=item.guide_answer,
                                  stop_after=study.guide_stop_after)
    if not closed and item.is_closed and item.instance_id and TaskInstance.objects.filter(
            pk=item.instance_id, status=InstanceStatus.WITHDRAWN).exists():
        closed = True  # asked only when an item would reopen: the answer path pays nothing
    if closed != item.is_closed:
        StudyItem.objects.filter(pk=item.pk).update(is_closed=closed)
        item.is_closed = closed
    return closed

