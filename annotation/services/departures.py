"""A participant who left on the crowd platform (a Prolific submission RETURNED or TIMED-OUT): their open session
ends at once and its unanswered items go back to the pool, instead of waiting for the grace period or the time
limit. Someone who withdrew (returned the submission) is not paid, so their answers are not used either: they are
excluded, which releases every slot they held, so the items still reach k valid answers."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import Batch, Participant, Reservation, Study
from annotation.services.answers import participant_exclude
from annotation.services.engine import reservations_release


def participant_departed(*, study: Study, platform: str, external_id: str, session_ref: str = "",
                         withdrawn: bool, reason: str, now: datetime | None = None) -> dict[str, Any]:
    """End the participant's open session(s) (only the one of `session_ref` when it names one) and release their
    unanswered slots; with `withdrawn`, exclude them too. Idempotent: a second call finds nothing open."""
    now = now or timezone.now()
    participant = Participant.objects.filter(study=study, platform=platform, external_id=external_id).first()
    if participant is None:
        return {"participant": None, "batches_ended": 0, "slots_released": 0, "excluded": False}
    with transaction.atomic():
        batches = Batch.objects.select_for_update().filter(participant=participant, state__in=Batch.OPEN_STATES)
        if session_ref:
            batches = batches.filter(session_ref__in=[session_ref, ""])
        ended = 0
        released = 0
        for batch in batches:  # under the batch row lock, as an answer would take it
            released += reservations_release(
                Reservation.objects.filter(batch=batch, answered_at__isnull=True, released=False), now=now)
            Batch.objects.filter(pk=batch.pk).update(state=Batch.State.EXPIRED, finished_at=now)
            ended += 1
        excluded = False
        if withdrawn and not participant.excluded:
            before = Reservation.objects.filter(participant=participant, released=False).count()
            participant_exclude(participant=participant, reason=reason, now=now)
            released += before
            excluded = True
    return {"participant": participant.pk, "batches_ended": ended, "slots_released": released, "excluded": excluded}
