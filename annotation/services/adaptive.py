"""Adaptive collection: an item closes once the m-of-k decision can no longer change (tasks.stel.majority), or, with a
guide, once its first answers all agree with the guide's; and what closing saved."""
from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import Response, StudyItem
from tasks.models import InstanceStatus, TaskInstance
from tasks.stel.majority import m_of_k_final


def item_decision_final(*, correct: int, wrong: int, k: int, m: int) -> bool:
    """True when no further answers can change the m-of-k decision (validated already, or out of reach)."""
    return bool(m_of_k_final(correct, wrong, k, m))


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
        closed = item_decision_final(correct=counts["correct"], wrong=counts["wrong"],
                                     k=study.annotators_per_item, m=study.min_correct)
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

