"""Loading a participant's session (its batch): the plain read, the locked read, expiry on the way, and the
errors every session service raises. Below `session_creation`, `sessions` and `answers`, which all load sessions."""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.error_codes import EXPIRED, WRONG_STATE
from annotation.models import Batch, Reservation
from annotation.services.engine import reservations_release
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError

FINISHED_STATES = (Batch.State.COMPLETED, Batch.State.SCREENED_OUT, Batch.State.EXPIRED, Batch.State.DECLINED)


def _not_found(what: str) -> ApplicationError:
    return ApplicationError(f"{what} not found.", code=NOT_FOUND, status=404)


def _wrong_state(batch: Batch, action: str) -> ApplicationError:
    return ApplicationError(
        f"Cannot {action} in state '{batch.state}'.", code=WRONG_STATE, status=409, details={"state": batch.state}
    )


def _expired() -> ApplicationError:
    return ApplicationError("The time limit of this batch has passed.", code=EXPIRED, status=410)


# --- loading a session ---------------------------------------------------------------------------------


def batch_expire(*, batch: Batch, now: datetime) -> bool:
    """Move an overdue batch to `expired` and release its unanswered reservations (caller holds the row lock)."""
    if batch.state != Batch.State.ITEMS or batch.expires_at is None or batch.expires_at > now:
        return False
    reservations_release(Reservation.objects.filter(batch=batch, answered_at__isnull=True, released=False), now=now)
    Batch.objects.filter(pk=batch.pk).update(state=Batch.State.EXPIRED, finished_at=now)
    batch.state = Batch.State.EXPIRED
    batch.finished_at = now
    return True


def _lock_batch(token: str) -> Batch:
    """The session row, locked for the rest of the transaction (serializes one participant's requests)."""
    if not token or len(token) > 64:
        raise _not_found("Session")
    batch = (
        Batch.objects.select_for_update(of=("self",))
        .select_related("study", "participant")
        .filter(token=token)
        .first()
    )
    if batch is None:
        raise _not_found("Session")
    return batch


def session_load(*, token: str) -> Batch:
    """The session (one plain SELECT on the hot path); expired first, under its lock, if its time is up."""
    if not token or len(token) > 64:
        raise _not_found("Session")
    batch = Batch.objects.select_related("study", "participant").filter(token=token).first()
    if batch is None:
        raise _not_found("Session")
    if batch.state == Batch.State.ITEMS and batch.expires_at is not None and batch.expires_at <= timezone.now():
        with transaction.atomic():
            batch = _lock_batch(token)
            batch_expire(batch=batch, now=timezone.now())
    return batch
