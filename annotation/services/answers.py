"""The participant's answers: checking an answer against its item, storing it (the hot path first), and
excluding a participant (every response invalidated). Split from `sessions` (the batches an answer belongs to)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone
from django.utils.translation import gettext
from rest_framework.utils.encoders import JSONEncoder

from annotation.error_codes import ANSWER_CONFLICT, NOT_RESERVED
from annotation.models import (
    Batch,
    Participant,
    Reservation,
    Response,
    StudyItem,
    TelemetryStatus,
)
from annotation.services import hot_path
from annotation.services.adaptive import item_refresh_closed
from annotation.services.answer_checks import AnswerRows, validate_answer
from annotation.services.engine import first_answer_extend, reservations_release
from annotation.services.session_lookup import _expired, _lock_batch, _not_found, _wrong_state, session_load
from annotation.services.sessions import session_next_body
from annotation.services.telemetry import FREE_TEXT_KINDS, telemetry_check, telemetry_parse
from core.errors import ApplicationError

# --- answering ----------------------------------------------------------------------------------------


@dataclass
class AnswerResult:
    stored: bool
    state: str
    progress: dict[str, int]
    # The JSON body `next` would answer right after this answer (the next item, or how the batch ended), so that
    # a client needs one request per item; None when it cannot be told here (the client then asks `next`).
    next_body: bytes | None = None




MAX_CLIENT_SECONDS = 3600.0


def client_seconds(value: Any) -> float | None:
    """The client-reported time on an item, kept as information only: a finite number clamped to
    0…MAX_CLIENT_SECONDS, or None. Speed is judged on the server's clock (`Response.server_seconds`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return min(float(value), MAX_CLIENT_SECONDS)


def answer_submit(*, token: str, item: str, answer: Any, seconds: float | None = None,
                  telemetry: Any = None) -> AnswerResult:
    """Store one answer: 201-stored, 200-already stored the same, or an ApplicationError.

    The common case (a live item of a running batch, on PostgreSQL) is one statement in `hot_path`; every other
    case, and a fast claim that lost a race, runs here under the batch row lock. `telemetry` (a free-text answer's
    writing telemetry, services/telemetry.py) is checked for its shape before anything else: a malformed block is
    a 400 and nothing is stored."""
    seconds = client_seconds(seconds)
    telemetry = telemetry_parse(telemetry)
    fast = hot_path.answer_fast(token=token, item=item, answer=answer, seconds=seconds, telemetry=telemetry)
    if fast is not None:
        following = fast["next"] if fast["next"] is not None else _next_body(token)
        return AnswerResult(True, fast["state"], fast["progress"], following)
    if not token or len(token) > 64:
        raise _not_found("Session")
    now = timezone.now()
    with transaction.atomic():
        # The batch row first, then the reservation: the order every writer of a session takes (the hot path's
        # statement too), so none can deadlock. One participant's requests run one at a time (exclusion,
        # completion), and a duplicate answer waits for the first to commit.
        batch = _lock_batch(token)  # 404 for a forged token
        reservation = (
            Reservation.objects.select_for_update(of=("self",))
            .select_related("study_item", "screening_question")
            .filter(batch=batch, public_id=str(item or "")[:32])
            .first()
        ) if item else None
        if reservation is not None:
            reservation.batch = batch
        overdue = batch.state == Batch.State.ITEMS and batch.expires_at is not None and batch.expires_at <= now
        if not overdue:
            result = _answer_locked(batch=batch, reservation=reservation, item=item, answer=answer,
                                    seconds=seconds, now=now, telemetry=telemetry)
    if overdue:
        session_load(token=token)  # expires the batch (its own transaction), committed before the error
        raise _expired()
    result.next_body = _next_body(token)  # after the commit: what `next` serves now
    return result


def _next_body(token: str) -> bytes | None:
    """`next`'s body after an answer was stored (the general path's `next`, which stamps the item served); None
    when `next` would answer with an error (the client then asks `next` itself and handles it)."""
    try:
        body = session_next_body(token=token)
    except ApplicationError:
        return None
    return json.dumps(body, cls=JSONEncoder, separators=(",", ":")).encode()


def _answer_locked(*, batch: Batch, reservation: Reservation | None, item: str, answer: Any,
                   seconds: float | None, now: datetime, telemetry: dict[str, Any] | None = None) -> AnswerResult:
    """Store one answer; the caller holds the batch row lock."""
    if batch.state == Batch.State.EXPIRED:
        raise _expired()
    if batch.state not in (Batch.State.ITEMS, Batch.State.COMPLETED):
        raise _wrong_state(batch, "answer items")
    study = batch.study
    participant = batch.participant
    if reservation is None:
        raise ApplicationError(gettext("This item is not reserved for this session."), code=NOT_RESERVED,
                               status=404, details={"item": ["not reserved for this session"]})
    rows = validate_answer(study=study, shown=reservation.shown, answer=answer)
    if telemetry is not None and reservation.shown.get("kind") not in FREE_TEXT_KINDS:
        raise ApplicationError("telemetry is recorded for free-text answers only; this item is answered by choice.",
                               details={"telemetry": ["only for free-text answers"]})
    if reservation.answered_at is not None:
        return _answer_repeated(batch=batch, reservation=reservation, rows=rows)
    before = Reservation.objects.filter(batch=batch).aggregate(
        total=Count("id"), done=Count("id", filter=Q(answered_at__isnull=False)), last=Max("answered_at")
    )
    # Claim the reservation: it must still be live. A concurrent reserver releasing it (expired) and this
    # claim are serialized on the row, and each re-checks its condition, so only one of them can win.
    if reservation.expires_at <= now or (reservation.released and not participant.excluded):
        raise _expired()
    # Shown when `next` served it; failing that (never served through `next`), when the previous answer was
    # stored (one item per screen), or when the batch started.
    previous = [t for t in (before["last"], batch.started_at) if t]
    shown_at = reservation.served_at or reservation.shown_at or (max(previous) if previous else None)
    Reservation.objects.filter(pk=reservation.pk).update(answered_at=now, shown_at=shown_at)
    server_seconds = (now - shown_at).total_seconds() if shown_at else None
    record, telemetry_status = (None, TelemetryStatus.NONE) if telemetry is None else telemetry_check(
        telemetry=telemetry, text=rows[0][1], shown_at=shown_at, answered_at=now)
    if before["done"] == 0 and batch.state == Batch.State.ITEMS:
        first_answer_extend(batch=batch, now=now)
    is_screening = reservation.screening_question_id is not None
    study_item = reservation.study_item
    correct = (reservation.screening_question.correct_answer_for(study.item_kind) if is_screening
               else study_item.correct_answer)
    Response.objects.bulk_create([
        Response(
            study=study, participant=participant, study_item=study_item,
            screening_question_id=reservation.screening_question_id, batch_number=batch.number,
            question=question, answer=canonical, value=value, is_screening=is_screening,
            is_correct=(canonical == correct) if correct else None, is_valid=not participant.excluded,
            shown=reservation.shown, shown_at=shown_at, answered_at=now, seconds=seconds,
            server_seconds=server_seconds, batch=batch, reservation=reservation, telemetry=record,
            telemetry_status=telemetry_status,
        )
        for question, canonical, value in rows
    ])
    if is_screening and correct and rows[0][1] != correct and not participant.excluded:
        participant_exclude(participant=participant, now=now,
                            reason=f"failed screening question {reservation.screening_question.name}")
    elif study_item is not None and study.adaptive_stopping and not participant.excluded:
        item_refresh_closed(item=study_item)
    progress = {"done": before["done"] + 1, "total": before["total"]}
    if batch.state == Batch.State.ITEMS and progress["done"] == progress["total"]:
        batch.state = Batch.State.COMPLETED
        batch.finished_at = now
        batch.save(update_fields=["state", "finished_at"])
    return AnswerResult(True, batch.state, progress)


def _answer_repeated(*, batch: Batch, reservation: Reservation, rows: AnswerRows) -> AnswerResult:
    """An item answered before: the same answer again is stored already (200), a different one a conflict."""
    existing = list(Response.objects.filter(reservation=reservation).values_list("question", "answer"))
    if sorted(existing) == sorted((q, a) for q, a, _ in rows):
        return AnswerResult(False, batch.state, _progress(batch))
    raise ApplicationError(gettext("This item was already answered differently; answers cannot be changed."),
                           code=ANSWER_CONFLICT, status=409)


def _progress(batch: Batch) -> dict[str, int]:
    counts = Reservation.objects.filter(batch=batch).aggregate(
        total=Count("id"), done=Count("id", filter=Q(answered_at__isnull=False))
    )
    return {"done": counts["done"], "total": counts["total"]}


def participant_exclude(*, participant: Participant, reason: str, now: datetime | None = None) -> int:
    """Exclude a participant: every response invalid, every slot they hold released, adaptive closures rechecked.

    Returns the number of responses invalidated. The caller may already be in a transaction.
    """
    now = now or timezone.now()
    with transaction.atomic():
        Participant.objects.filter(pk=participant.pk).update(excluded=True, exclusion_reason=reason[:200],
                                                             excluded_at=now)
        participant.excluded = True
        participant.exclusion_reason = reason[:200]
        participant.excluded_at = now
        n = Response.objects.filter(participant=participant, is_valid=True).update(is_valid=False)
        reservations_release(Reservation.objects.filter(participant=participant, released=False), now=now)
        if participant.study.adaptive_stopping:
            for item in StudyItem.objects.filter(
                Q(reservations__participant=participant), is_closed=True
            ).select_related("study").distinct():
                item_refresh_closed(item=item)
    return n
