"""The participant flow after arrival: consent (and decline), eligibility, start, and serving items. Arrival is in
`session_creation`, loading a session in `session_lookup`, storing answers in `annotation.services.answers`."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.error_codes import NO_WORK_AVAILABLE, SPECIAL_CATEGORY_CONSENT_MISSING
from annotation.models import Batch, Participant, Reservation, Study
from annotation.selectors import batch_progress
from annotation.services import participation
from annotation.services.consent import consent_statement, consent_version_resolve, special_category_questions
from annotation.services.display import finished_payload, public_item, public_questions, redirect_with_code
from annotation.services.engine import batch_reserve
from annotation.services.persona_platform import questions_asked
from annotation.services.review import review_feedback
from annotation.services.rewrites import persona_store
from annotation.services.session_lookup import (
    _expired,
    _lock_batch,
    _not_found,
    _wrong_state,
    batch_expire,
    session_load,
)
from core.errors import ApplicationError

# --- consent, eligibility, start -----------------------------------------------------------------------


def _passed_eligibility_before(batch: Batch) -> bool:
    return (
        Batch.objects.filter(participant=batch.participant)
        .exclude(pk=batch.pk)
        .exclude(eligibility_answers={})
        .exclude(state=Batch.State.SCREENED_OUT)
        .exists()
    )


def session_consent(*, token: str, agree: Any, special_category: bool = False) -> Batch:
    """`agree: true` moves on; `agree: false` records the decline: the batch ends in `declined` (it holds no
    reservations yet), and a reload shows the declined ending, not the consent page again. Agreeing records the
    consent version of the text shown now (annotation.services.consent) and the time; a study asking special-category
    questions also needs `special_category: true`, the separate tick of its explicit-consent statement."""
    if not isinstance(agree, bool):
        raise ApplicationError("Send {\"agree\": true} to take part, or {\"agree\": false} to decline.",
                               details={"agree": ["must be true or false"]})
    if agree is False:
        return session_decline(token=token)
    with transaction.atomic():
        batch = _lock_batch(token)
        overdue = batch_expire(batch=batch, now=timezone.now())  # committed before the 409 below
        if batch.state in (Batch.State.ELIGIBILITY, Batch.State.INSTRUCTIONS, Batch.State.ITEMS):
            return batch  # a repeated click: nothing to change
        if batch.state == Batch.State.CONSENT:
            study = batch.study
            special = bool(special_category_questions(questions=study.eligibility_questions))
            if special and special_category is not True:
                raise ApplicationError(
                    gettext("This study asks special-category questions: tick the separate explicit consent to "
                            "take part."),
                    code=SPECIAL_CATEGORY_CONSENT_MISSING, status=400,
                    details={"special_category": ["must be true to take part"]})
            asked = questions_asked(study.eligibility_questions)  # those read from the platform are not asked
            needs_eligibility = bool(asked) and not _passed_eligibility_before(batch)
            batch.state = Batch.State.ELIGIBILITY if needs_eligibility else Batch.State.INSTRUCTIONS
            batch.consented_at = timezone.now()
            batch.consent_version = consent_version_resolve(study=study)
            batch.special_consented_at = batch.consented_at if special else None
            batch.save(update_fields=["state", "consented_at", "consent_version", "special_consented_at"])
            return batch
        if not overdue:
            raise _wrong_state(batch, "consent")
    raise _wrong_state(batch, "consent")


def session_decline(*, token: str) -> Batch:
    with transaction.atomic():
        batch = _lock_batch(token)
        if batch.state == Batch.State.DECLINED:
            return batch  # a repeated click
        if batch.state != Batch.State.CONSENT:
            raise _wrong_state(batch, "decline consent")
        batch.state = Batch.State.DECLINED
        batch.finished_at = timezone.now()
        batch.save(update_fields=["state", "finished_at"])
    return batch


def _validate_eligibility(study: Study, answers: Any) -> dict[str, str]:
    """The answers, each a value among its question's choices (the value, not the label a page shows for it). A
    refusal speaks the study's language (the request's, set when the session was loaded) and names the questions by
    their texts, never their values (English words a page in another language does not show)."""
    if not isinstance(answers, dict):
        raise ApplicationError(gettext("answers must be an object {question name: choice}."),
                               details={"answers": ["object"]})
    errors: dict[str, list[str]] = {}
    clean: dict[str, str] = {}
    unanswered: list[str] = []
    asked = questions_asked(study.eligibility_questions)  # not those read from the platform
    for question in asked:
        name = question["name"]
        value = answers.get(name)
        choices = [str(c) for c in question.get("choices", [])]
        if value is None or str(value) not in choices:
            errors[name] = [gettext("choose one of: %(choices)s") % {"choices": ", ".join(choices)}]
            unanswered.append(str(question.get("text") or name))
        else:
            clean[name] = str(value)
    unknown = set(answers) - {q["name"] for q in asked}
    parts = []
    if unanswered:
        parts.append(gettext("Please answer these questions with one of their choices: %(questions)s")
                     % {"questions": "; ".join(unanswered)})
    if unknown:  # counted, not named: an error never echoes what was sent
        errors["unknown"] = [gettext("answers to questions this study does not ask: %(count)d")
                             % {"count": len(unknown)}]
        parts.append(errors["unknown"][0])
    if errors:
        raise ApplicationError(" — ".join(parts), details=errors)
    return clean


def session_eligibility(*, token: str, answers: Any) -> Batch:
    session_load(token=token)
    with transaction.atomic():
        batch = _lock_batch(token)
        if batch.state != Batch.State.ELIGIBILITY:
            raise _wrong_state(batch, "answer eligibility questions")
        study = batch.study
        clean = _validate_eligibility(study, answers)
        persona_store(participant=batch.participant, study=study, answers=clean)
        attempts = list((batch.eligibility_answers or {}).get("attempts", []))
        failed = [q["name"] for q in questions_asked(study.eligibility_questions)
                  if q.get("accept") and clean[q["name"]] not in [str(a) for a in q["accept"]]]
        attempts.append({"answers": clean, "failed": failed, "at": timezone.now().isoformat()})
        batch.eligibility_answers = {"attempts": attempts, "answers": clean}
        failed_screeners = [n for n in failed if not _is_comprehension(study, n)]
        failed_comprehension = [n for n in failed if _is_comprehension(study, n)]
        comprehension_failures = sum(
            1 for a in attempts if any(_is_comprehension(study, n) for n in a["failed"])
        )
        if failed_screeners or comprehension_failures >= 2:
            # A screener answered "wrongly", or a comprehension check failed twice: the session ends politely.
            batch.state = Batch.State.SCREENED_OUT
            batch.finished_at = timezone.now()
            reason = ("eligibility: " + ", ".join(failed_screeners)) if failed_screeners else \
                "comprehension check failed twice: " + ", ".join(failed_comprehension)
            Participant.objects.filter(pk=batch.participant_id).update(
                screened_out=True, exclusion_reason=reason[:200]
            )
            batch.participant.screened_out = True
        elif failed_comprehension:
            pass  # first failed comprehension check: the participant may read the instructions and try again
        else:
            batch.state = Batch.State.INSTRUCTIONS
        batch.save(update_fields=["state", "eligibility_answers", "finished_at"])
    return batch


def _is_comprehension(study: Study, name: str) -> bool:
    return any(q["name"] == name and q.get("comprehension") for q in study.eligibility_questions)


def session_start(*, token: str) -> Batch:
    with transaction.atomic():
        batch = _lock_batch(token)
        batch_expire(batch=batch, now=timezone.now())  # an overdue batch: expired, committed before the 410 below
        if batch.state in (Batch.State.ITEMS, Batch.State.COMPLETED):
            return batch
        if batch.state == Batch.State.INSTRUCTIONS:
            study = batch.study
            if study.max_open_batches:
                # Starts of a capped study take turns on its row, so the cap holds under concurrency.
                Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).first()
                participation.check_room(study=study, now=timezone.now(), exclude_pk=batch.pk, started_only=True)
            if batch.participant.excluded or not batch_reserve(batch=batch):
                raise ApplicationError(gettext("There are no more items available for you in this study."),
                                       code=NO_WORK_AVAILABLE, status=409)
            batch.state = Batch.State.ITEMS
            batch.save(update_fields=["state", "n_items", "started_at", "expires_at"])
            batch.started_now = True  # its progress is known without a query: nothing answered yet
            return batch
        if batch.state != Batch.State.EXPIRED:
            raise _wrong_state(batch, "start the items")
    raise _expired()


# --- serving ----------------------------------------------------------------------------------------


NEXT_FIELDS = (
    "id", "public_id", "position", "shown", "answered_at", "batch__id", "batch__state", "batch__expires_at",
    "batch__token", "batch__number", "batch__study__id", "batch__study__item_kind", "batch__study__questions",
    "batch__study__completion_code", "batch__study__screened_out_code", "batch__study__redirect_url",
    "batch__started_at", "batch__study__batch_time_limit_minutes",  # the time limit shown (`expires_at`)
    "batch__participant__platform",
)


def session_next(*, token: str) -> tuple[Batch, Reservation | None, dict[str, int]]:
    """The batch's next unanswered reservation and the progress, or None once the batch is done.

    One read (the batch's reservations joined with their batch and study) and, the first time an item is
    served, one write of its `served_at`: the server's clock starts the item's time there."""
    if not token or len(token) > 64:
        raise _not_found("Session")
    rows = list(
        Reservation.objects.filter(batch__token=token).select_related("batch__study", "batch__participant")
        .only(*NEXT_FIELDS)
        .order_by("position")
    )
    batch = rows[0].batch if rows else None
    if batch is None or batch.state != Batch.State.ITEMS or (
        batch.expires_at is not None and batch.expires_at <= timezone.now()
    ):
        return _session_next_slow(token=token)
    for row in rows:
        row.batch = batch
    return _serve_first_open(token=token, batch=batch, rows=rows)


def session_next_body(*, token: str) -> dict[str, Any]:
    """What `next` answers on the general path: the next item with the progress and the time limit shown, or how
    the batch ended (its code and where to take it). The hot path builds the same body in SQL
    (`hot_path.next_fast`, and the answer's `next`)."""
    batch, reservation, progress = session_next(token=token)
    if reservation is None:
        code, redirect = batch_code(batch)
        return finished_payload(state=batch.state, completion_code=code, redirect_url=redirect, progress=progress)
    item = public_item(shown=reservation.shown, public_id=reservation.public_id, position=reservation.position,
                       study=batch.study)
    return {"item": item, "progress": progress, "state": batch.state,
            "expires_at": participation.batch_time_limit_at(batch)}


def _progress(rows: list[Reservation]) -> dict[str, int]:
    return {"done": sum(1 for r in rows if r.answered_at is not None), "total": len(rows)}


def _serve_first_open(*, token: str, batch: Batch, rows: list[Reservation],
                      ) -> tuple[Batch, Reservation | None, dict[str, int]]:
    """A running batch's reservations in order: the first unanswered one is served (and stamped), or, with none
    left, the batch is completed under its lock."""
    reservation = next((r for r in rows if r.answered_at is None), None)
    if reservation is None:
        with transaction.atomic():
            batch = _lock_batch(token)
            _complete_if_done(batch)
    else:
        _mark_served(reservation)
    return batch, reservation, _progress(rows)


def _mark_served(reservation: Reservation) -> None:
    """When `next` first returns an item: where its server-measured time starts (a repeat keeps the first)."""
    Reservation.objects.filter(pk=reservation.pk, served_at__isnull=True).update(served_at=timezone.now())


def _session_next_slow(*, token: str) -> tuple[Batch, Reservation | None, dict[str, int]]:
    """Every state other than a running batch: start it, expire it, or report how it ended."""
    batch = session_load(token=token)
    if batch.state == Batch.State.INSTRUCTIONS:
        batch = session_start(token=token)
    if batch.state == Batch.State.EXPIRED:
        raise _expired()
    if batch.state not in (Batch.State.ITEMS, Batch.State.COMPLETED, Batch.State.SCREENED_OUT):
        raise _wrong_state(batch, "get items")
    rows = list(Reservation.objects.filter(batch=batch).order_by("position").only(
        "id", "public_id", "position", "shown", "answered_at"))
    if batch.state != Batch.State.ITEMS:
        return batch, None, _progress(rows)
    return _serve_first_open(token=token, batch=batch, rows=rows)


def _complete_if_done(batch: Batch) -> bool:
    unanswered = Reservation.objects.filter(batch=batch, answered_at__isnull=True)
    if batch.state == Batch.State.ITEMS and not unanswered.exists():
        batch.state = Batch.State.COMPLETED
        batch.finished_at = timezone.now()
        batch.save(update_fields=["state", "finished_at"])
        return True
    return False


# --- what the page is sent --------------------------------------------------------------------------


def batch_code(batch: Batch) -> tuple[str | None, str | None]:
    """The code a finished batch ends with, and where to take it: the completion code for a completed batch, the
    (independent) screened-out code for a screened-out one; no code for an expired or declined batch (those
    participants return the submission/HIT: docs/annotator-api.md, "Endings")."""
    study = batch.study
    code = {Batch.State.COMPLETED: study.completion_code,
            Batch.State.SCREENED_OUT: study.screened_out_code}.get(batch.state)
    if code is None:
        return None, None
    return code, redirect_with_code(study.redirect_url or "", code, platform=batch.participant.platform)


def session_payload(batch: Batch) -> dict[str, Any]:
    study = batch.study
    code, redirect = batch_code(batch)
    return {
        "token": batch.token,
        "state": batch.state,
        "batch": batch.number,
        "study": {
            "slug": study.slug,
            "title": study.title,
            "item_kind": study.item_kind,
            "task_description": study.task_description,
            "consent_text": study.consent_text,
            "consent_statement": consent_statement(study=study),
            "special_category_consent": study.special_category_consent
            if special_category_questions(questions=study.eligibility_questions) else "",
            "eligibility_questions": [
                {"name": q["name"], "text": q.get("text", q["name"]), "choices": list(q.get("choices", [])),
                 # value → the label shown, in the study's language (a persona question in another language's)
                 **({"choice_labels": dict(q["choice_labels"])} if q.get("choice_labels") else {})}
                for q in questions_asked(study.eligibility_questions)
            ],
            "questions": public_questions(study),
            "rewrite_min_length": study.rewrite_min_length,
            "estimated_minutes": study.estimated_minutes,
        },
        # The code the participant quotes to withdraw or ask for erasure (annotation.services.consent).
        "consent_receipt": batch.consent_receipt,
        "progress": batch_progress(batch),
        "expires_at": participation.batch_time_limit_at(batch),
        "completion_code": code,
        "redirect_url": redirect,
        # Reasons of the worker's rejected rewrites, shown on their next visit (annotation/services/review.py).
        **({"feedback": review_feedback(batch=batch)} if study.item_kind == "rewrite" else {}),
    }
