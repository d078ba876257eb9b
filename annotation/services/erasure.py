"""Erasure on request, annotation's tables: every Participant row of the person (one per study they took part in)
with their answers, sessions, reservations, practice answers, persona and eligibility answers, telemetry, rewrites
and the rewrites' reviews and writing signals (all cascade from the participant), and their worker block.

Slots the person held in an open study are given back the way the engine gives back any slot: the items' rows are
locked as a reserver locks them, the reservations go, `fill` is recounted, and an adaptively closed item is
rechecked, so the next arrival can take the slot and an item still reaches exactly k answers, never k + 1.
Registered with core's erasure (core/erasure.py) by AnnotationConfig.ready().
"""
from __future__ import annotations

from django.db import transaction

from annotation.models import (
    Batch,
    Participant,
    PracticeAnswer,
    Reservation,
    Response,
    RewriteReview,
    StudyItem,
    WorkerBlock,
    WritingSignal,
)
from annotation.services.adaptive import item_refresh_closed
from annotation.services.engine import study_items_refresh_fill
from core.erasure import ErasurePart, ErasureTarget


def participant_data_erase(target: ErasureTarget) -> ErasurePart:
    """Delete the person's annotation data in every study; counts per table and the studies touched."""
    people = Participant.objects.filter(platform=target.platform, external_id=target.external_id)
    ids = list(people.values_list("pk", flat=True))
    blocks = WorkerBlock.objects.filter(platform=target.platform, external_id=target.external_id)
    part = ErasurePart()
    part.counts["annotation.WorkerBlock"] = blocks.count()
    if not ids:
        blocks.delete()
        return part
    part.study_ids = set(people.values_list("study_id", flat=True))
    responses = Response.objects.filter(participant_id__in=ids)
    part.counts.update({
        "annotation.Participant": len(ids),
        "annotation.Response": responses.count(),
        "annotation.RewriteReview": RewriteReview.objects.filter(response__participant_id__in=ids).count(),
        "annotation.WritingSignal": WritingSignal.objects.filter(response__participant_id__in=ids).count(),
        "annotation.Batch": Batch.objects.filter(participant_id__in=ids).count(),
        "annotation.Reservation": Reservation.objects.filter(participant_id__in=ids).count(),
        "annotation.PracticeAnswer": PracticeAnswer.objects.filter(participant_id__in=ids).count(),
    })
    item_ids = sorted(
        set(Reservation.objects.filter(participant_id__in=ids, study_item__isnull=False)
            .values_list("study_item_id", flat=True))
        | set(responses.filter(study_item__isnull=False).values_list("study_item_id", flat=True)))
    with transaction.atomic():
        # The reservers' lock, taken in id order: no reserver counts these items' holders while they change.
        list(StudyItem.objects.select_for_update().filter(pk__in=item_ids).order_by("pk").values_list("pk"))
        blocks.delete()
        people.delete()
        study_items_refresh_fill(item_ids=item_ids)
        for item in StudyItem.objects.filter(pk__in=item_ids, is_closed=True, study__adaptive_stopping=True
                                             ).select_related("study"):
            item_refresh_closed(item=item)
    return part
