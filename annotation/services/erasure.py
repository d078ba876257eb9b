"""Erasure on request, annotation's tables: every Participant row of the person (one per study they took part in,
and every imported annotator stored under the same id: the same person's ratings read from a researcher's file)
with their answers, sessions, reservations, practice answers, persona and eligibility answers, telemetry, rewrites
and the rewrites' reviews and writing signals (all cascade from the participant), and their worker block.

Slots the person held in an open study are given back the way the engine gives back any slot: the items' rows are
locked as a reserver locks them, the reservations go, `fill` is recounted, and an adaptively closed item is
rechecked, so the next arrival can take the slot and an item still reaches exactly k answers, never k + 1.
Items on task instances the tasks eraser withdrew (built from the person's rewrites) are closed in every study and
their unanswered reservations taken out of their batches (each batch's item count with them), so no one is served a
withdrawn instance again and no reservation keeps its text (`withdrawn_items_close`, which runs after the tasks eraser).
Registered with core's erasure (core/erasure.py) by AnnotationConfig.ready().
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import Greatest

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
from core.erasure import IMPORTED, ErasurePart, ErasureTarget
from core.error_codes import INVALID
from core.errors import ApplicationError
from tasks.models import InstanceStatus


def _refuse_imported_only_of_a_platform_person(target: ErasureTarget) -> None:
    """`imported` alone is refused for an id a platform's participant also holds: the sweep would replace that id
    with the imported person's key, leaving the platform participant's answers under a key no erasure by their
    platform id could find again. Their platform's erasure takes the imported annotators with it."""
    if target.platform != IMPORTED:
        return
    platforms = sorted(set(Participant.objects.filter(external_id=target.external_id).exclude(platform=IMPORTED)
                           .values_list("platform", flat=True)))
    if platforms:
        raise ApplicationError(
            f"Platform: a {' and a '.join(platforms)} participant holds this id too; erase with platform "
            f"{platforms[0]}, which erases the imported annotators with this id as well (nothing was erased).",
            code=INVALID, field="platform")


def participant_data_erase(target: ErasureTarget) -> ErasurePart:
    """Delete the person's annotation data in every study; counts per table, the studies touched, and how many of
    the participants and answers were imported annotators' (`part.imported`)."""
    _refuse_imported_only_of_a_platform_person(target)
    people = Participant.objects.filter(platform__in=target.participant_platforms, external_id=target.external_id)
    ids = list(people.values_list("pk", flat=True))
    blocks = WorkerBlock.objects.filter(platform=target.platform, external_id=target.external_id)
    part = ErasurePart()
    part.counts["annotation.WorkerBlock"] = blocks.count()
    if not ids:
        blocks.delete()
        return part
    part.study_ids = set(people.values_list("study_id", flat=True))
    responses = Response.objects.filter(participant_id__in=ids)
    part.imported = {"participants": people.filter(platform=IMPORTED).count(),
                     "ratings": responses.filter(participant__platform=IMPORTED).count()}
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


def withdrawn_items_close(target: ErasureTarget) -> ErasurePart:
    """Close every open study item whose task instance is withdrawn, and take its unanswered reservations out of
    their batches.

    An unanswered reservation is removed, not only released: `next` serves a batch's unanswered reservations
    whatever their `released` flag, and its `shown` and `public_item` hold the withdrawn text. Its batch's
    `n_items` goes down with it, so the progress (`done` of `total`) and the completion rule (every reservation
    answered; the hot path's `done + 1 >= n_items`) hold for what is left, and the holder's batch can still end."""
    part = ErasurePart()
    with transaction.atomic():
        items = StudyItem.objects.select_for_update().filter(instance__status=InstanceStatus.WITHDRAWN,
                                                             is_closed=False).order_by("pk")
        item_ids = list(items.values_list("pk", flat=True))
        StudyItem.objects.filter(pk__in=item_ids).update(is_closed=True)
        # Also items closed earlier (full, or a reservation left by an expired batch): no unanswered copy of a
        # withdrawn text stays in a batch.
        unanswered = Reservation.objects.filter(study_item__instance__status=InstanceStatus.WITHDRAWN,
                                                answered_at__isnull=True)
        batch_ids = sorted(set(unanswered.values_list("batch_id", flat=True)))
        # The answer path's lock on the batch row, in id order: no answer completes or extends these batches while
        # their reservations go.
        list(Batch.objects.select_for_update().filter(pk__in=batch_ids).order_by("pk").values_list("pk"))
        per_batch = dict(unanswered.order_by().values("batch_id").annotate(n=Count("pk")).values_list("batch_id", "n"))
        removed_items = sorted(set(unanswered.values_list("study_item_id", flat=True)))
        part.study_ids = set(StudyItem.objects.filter(pk__in=[*item_ids, *removed_items])
                             .values_list("study_id", flat=True))
        removed, _ = unanswered.delete()
        for batch_id, n in per_batch.items():
            Batch.objects.filter(pk=batch_id).update(n_items=Greatest(F("n_items") - n, 0))
        if removed_items:
            study_items_refresh_fill(item_ids=removed_items)
    if not item_ids and not removed:
        return part
    part.counts = {"annotation.StudyItem (closed: withdrawn)": len(item_ids),
                   "annotation.Reservation (removed from batches: withdrawn, unanswered)": removed}
    return part
