"""Loading a participant's session (its batch): the plain read, the locked read, expiry on the way, and the
errors every session service raises. Below `session_creation`, `sessions` and `answers`, which all load sessions."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.error_codes import EXPIRED, WRONG_STATE
from annotation.models import Batch
from annotation.services.engine import batch_expire
from annotation.services.study_language import participant_language_activate
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError

FINISHED_STATES = (Batch.State.COMPLETED, Batch.State.SCREENED_OUT, Batch.State.EXPIRED, Batch.State.DECLINED)


def _not_found(what: str) -> ApplicationError:
    if what == "Session":  # the participant's own message, in the study's language when one is active
        return ApplicationError(gettext("Session not found."), code=NOT_FOUND, status=404)
    return ApplicationError(f"{what} not found.", code=NOT_FOUND, status=404)


def _wrong_state(batch: Batch, action: str) -> ApplicationError:
    return ApplicationError(
        f"Cannot {action} in state '{batch.state}'.", code=WRONG_STATE, status=409, details={"state": batch.state}
    )


def _expired() -> ApplicationError:
    return ApplicationError(gettext("The time limit of this batch has passed."), code=EXPIRED, status=410)


# --- loading a session ---------------------------------------------------------------------------------


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
    participant_language_activate(batch.study)
    return batch


def session_load(*, token: str) -> Batch:
    """The session (one plain SELECT on the hot path); expired first, under its lock, if its time is up."""
    if not token or len(token) > 64:
        raise _not_found("Session")
    batch = Batch.objects.select_related("study", "participant").filter(token=token).first()
    if batch is None:
        raise _not_found("Session")
    participant_language_activate(batch.study)
    if batch.state == Batch.State.ITEMS and batch.expires_at is not None and batch.expires_at <= timezone.now():
        with transaction.atomic():
            batch = _lock_batch(token)
            batch_expire(batch=batch, now=timezone.now())
    return batch
