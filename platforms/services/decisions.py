"""Sending StyleCrowd's decisions (approve / reject / ask to return / screen out) through the platform's API.

A dry run (the default) shows exactly the requests `apply` would send. Applying writes one Decision row per
submission (unique: a submission is decided once) before any call, claims rows with a row lock so two runs never send
the same one, and records the platform's answer on each. Running it again sends nothing new; a decision whose outcome
was unknown stays "unknown" until a sync reads it done on the platform ("confirmed") or a person resolves it."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.error_codes import WRONG_STATE
from annotation.selectors import participant_recommendations
from annotation.services.exports import decision_reason, rejection_category
from annotation.services.review import review_recommendations
from core.errors import ApplicationError
from platforms.backends import backend_for, people_platform
from platforms.backends.base import PlannedCall, PlatformBackend
from platforms.clients.errors import UNKNOWN, PlatformCallError
from platforms.error_codes import CONFIRMATION_REQUIRED, MESSAGE_TOO_LONG, MESSAGE_TOO_SHORT
from platforms.models import CallState, Decision, PlatformStudy, PlatformSubmission
from platforms.services.sync import platform_sync

MIN_REJECTION_MESSAGE = 100  # Prolific asks for at least 100 characters (its API description; not enforced there)
CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK", "LOW_EFFORT",
              "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER")
APPROVAL_FEEDBACK = "Thank you for taking part; your work was approved."
CONTACT = " If you think this is a mistake, please message the researcher through the platform."
STALE = timedelta(minutes=10)


def rejection_message(*, rec: dict[str, Any], override: str = "", limit: int = 10_000) -> str:
    """The message a rejected participant reads, written from the evidence; at least 100 characters (checked)."""
    message = (override or decision_reason(rec)).strip()
    if not override and len(message) < MIN_REJECTION_MESSAGE:
        message += CONTACT
    if len(message) < MIN_REJECTION_MESSAGE:
        raise ApplicationError(f"Rejection message: {len(message)} characters; a rejection must explain itself in at "
                               f"least {MIN_REJECTION_MESSAGE} characters.", code=MESSAGE_TOO_SHORT,
                               field="reject_message")
    if len(message) > limit:
        raise ApplicationError(f"Rejection message: {len(message)} characters; the platform takes at most {limit}.",
                               code=MESSAGE_TOO_LONG, field="reject_message")
    return message


def return_reason(rec: dict[str, Any]) -> str:
    evidence = "; ".join(rec.get("evidence") or []) or "no answers were recorded"
    return f"No work to pay for was recorded ({evidence}); please return your submission."


def _recommendations(platform_study: PlatformStudy) -> dict[str, dict[str, Any]]:
    study = platform_study.study
    recs = review_recommendations(study=study, recs=participant_recommendations(study=study))
    people = people_platform(platform_study.platform)
    return {rec["participant"]: rec for rec in recs if rec["platform"] == people}


def _plan(platform_study: PlatformStudy, backend: PlatformBackend, *, reject_message: str,
          retry_failed: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(decisions to make, submissions skipped with the reason) from the stored submissions."""
    recs = _recommendations(platform_study)
    planned: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    decided = {d.submission_id: d for d in Decision.objects.filter(platform_study=platform_study)}
    for sub in PlatformSubmission.objects.filter(platform_study=platform_study).order_by("started_at", "pk"):
        existing = decided.get(sub.pk)
        if existing is not None and not (retry_failed and existing.state == CallState.FAILED):
            skipped.append({"submission": sub.external_id, "worker": sub.worker_id,
                            "reason": f"already decided: {existing.kind} ({existing.state})"})
            continue
        rec = recs.get(sub.worker_id)
        if rec is None:
            skipped.append({"submission": sub.external_id, "worker": sub.worker_id,
                            "reason": "not a StyleCrowd participant of this study (left to you)"})
            continue
        kind, category, message = rec["recommendation"], "", ""
        if kind == "return" and rec.get("screened_out") and backend.screen_out_call(platform_study, "x"):
            kind = Decision.Kind.SCREEN_OUT
        allowed = backend.RETURNABLE if kind == Decision.Kind.RETURN else backend.DECIDABLE
        if sub.status not in allowed:
            skipped.append({"submission": sub.external_id, "worker": sub.worker_id,
                            "reason": f"{kind}: not possible while the submission is {sub.status or 'unknown'}"})
            continue
        if kind == Decision.Kind.RETURN and sub.return_requested_at:
            skipped.append({"submission": sub.external_id, "worker": sub.worker_id,
                            "reason": "return already requested"})
            continue
        if kind == Decision.Kind.REJECT:
            category = rejection_category(rec)
            if category not in CATEGORIES:
                raise ApplicationError(f"Rejection category {category!r} is not one of Prolific's "
                                       f"({', '.join(CATEGORIES)}).", field="rejection_category")
            message = rejection_message(rec=rec, override=reject_message, limit=backend.FEEDBACK_MAX)
        elif kind == Decision.Kind.RETURN:
            message = return_reason(rec)
            if backend.return_call(platform_study, sub.external_id, message) is None:
                skipped.append({"submission": sub.external_id, "worker": sub.worker_id,
                                "reason": "ask to return: MTurk has no such request; the worker returns the HIT "
                                          "(a submitted one is auto-approved after the HIT's approval delay)"})
                continue
        planned.append({"submission": sub, "worker": sub.worker_id, "kind": kind, "category": category,
                        "message": message, "evidence": "; ".join(rec.get("evidence") or [])})
    return planned, skipped


def _calls(platform_study: PlatformStudy, backend: PlatformBackend,
           rows: list[Any]) -> list[tuple[PlannedCall, list[Any]]]:
    """The calls that send `rows` (planned dicts or Decision rows), each with the rows it decides."""
    def attr(row: Any, name: str) -> Any:
        return row[name] if isinstance(row, dict) else getattr(row, name)

    def sid(row: Any) -> str:
        sub = attr(row, "submission")
        return sub.external_id

    calls: list[tuple[PlannedCall, list[Any]]] = []
    approvals = [r for r in rows if attr(r, "kind") == Decision.Kind.APPROVE]
    by_id = {sid(r): r for r in approvals}
    for approval in backend.approve_calls(platform_study, [sid(r) for r in approvals], APPROVAL_FEEDBACK):
        ids = approval.body.get("submission_ids") or [approval.body.get("AssignmentId")]
        calls.append((approval, [by_id[i] for i in ids]))
    for row in rows:
        kind = attr(row, "kind")
        call: PlannedCall | None
        if kind == Decision.Kind.REJECT:
            call = backend.reject_call(platform_study, sid(row), category=attr(row, "rejection_category")
                                       if not isinstance(row, dict) else row["category"], message=attr(row, "message"))
        elif kind == Decision.Kind.RETURN:
            call = backend.return_call(platform_study, sid(row), attr(row, "message"))
        elif kind == Decision.Kind.SCREEN_OUT:
            call = backend.screen_out_call(platform_study, sid(row))
        else:
            continue
        if call is not None:  # a step the platform lacks was skipped when planned
            calls.append((call, [row]))
    return calls


def platform_decide(
    *, platform_study: PlatformStudy, apply: bool = False, confirm_rejections: bool = False, reject_message: str = "",
    retry_failed: bool = False, sync: bool = True, created_by: str = "",
) -> dict[str, Any]:
    """Dry run: the decisions and exactly the requests that would be sent. `apply`: send them, once each."""
    sync_summary = platform_sync(platform_study=platform_study) if sync else None
    backend = backend_for(platform_study.account)
    try:
        with transaction.atomic():
            PlatformStudy.objects.select_for_update().get(pk=platform_study.pk)  # one planner at a time
            planned, skipped = _plan(platform_study, backend, reject_message=reject_message,
                                     retry_failed=retry_failed)
            counts = _counts(planned)
            if not apply:
                calls = [call.describe() for call, _ in _calls(platform_study, backend, planned)]
                return {"study": platform_study.study.slug, "dry_run": True, **counts, "calls": calls,
                        "decisions": [_public(p) for p in planned], "skipped": skipped,
                        "sync": _sync_brief(sync_summary)}
            if counts["reject"] and not confirm_rejections:
                raise ApplicationError(
                    f"{counts['reject']} rejection(s) would be sent: rejections need an explicit confirmation "
                    "(command line: --apply is the confirmation; API: \"confirm_rejections\": true; admin: tick the "
                    "confirmation box).", code=CONFIRMATION_REQUIRED, status=400, field="confirm_rejections")
            for p in planned:
                Decision.objects.update_or_create(
                    submission=p["submission"],
                    defaults={"platform_study": platform_study, "worker_id": p["worker"], "kind": p["kind"],
                              "rejection_category": p["category"], "message": p["message"],
                              "evidence": p["evidence"], "state": CallState.PENDING, "created_by": created_by,
                              "error": "", "response": {}})
        sent = decisions_send(platform_study=platform_study, backend=backend)
    finally:
        backend.close()
    return {"study": platform_study.study.slug, "dry_run": False, **counts, **sent, "skipped": skipped,
            "sync": _sync_brief(sync_summary)}


def decisions_send(*, platform_study: PlatformStudy, backend: PlatformBackend) -> dict[str, Any]:
    """Send every pending decision of the study that this runner can claim (skip-locked), recording each answer."""
    _stale_to_unknown(platform_study)
    outcome: dict[str, Any] = {"sent": 0, "failed": 0, "unknown": 0, "calls_made": 0, "errors": []}
    with transaction.atomic():
        rows = list(Decision.objects.select_for_update(skip_locked=True, of=("self",))
                    .filter(platform_study=platform_study, state=CallState.PENDING).select_related("submission"))
        Decision.objects.filter(pk__in=[r.pk for r in rows]).update(state=CallState.SENDING, sent_at=timezone.now())
    for call, decided in _calls(platform_study, backend, rows):
        ids = [d.pk for d in decided]
        Decision.objects.filter(pk__in=ids).update(request=call.describe())
        outcome["calls_made"] += 1
        try:
            response = backend.send(call)
        except PlatformCallError as exc:
            state = CallState.UNKNOWN if exc.outcome == UNKNOWN else CallState.FAILED
            Decision.objects.filter(pk__in=ids).update(state=state, error=exc.message, finished_at=timezone.now())
            outcome["unknown" if state == CallState.UNKNOWN else "failed"] += len(ids)
            outcome["errors"].append(exc.message)
            continue
        Decision.objects.filter(pk__in=ids).update(
            state=CallState.SENT, finished_at=timezone.now(),
            response=response if isinstance(response, dict) else {"body": response})
        outcome["sent"] += len(ids)
    return outcome


def _stale_to_unknown(platform_study: PlatformStudy) -> None:
    """Rows left "sending" by a runner that died: their calls may have gone out, so their outcome is unknown."""
    Decision.objects.filter(platform_study=platform_study, state=CallState.SENDING,
                            sent_at__lt=timezone.now() - STALE).update(
        state=CallState.UNKNOWN, error="the run sending it stopped before recording the platform's answer")


def _counts(planned: list[dict[str, Any]]) -> dict[str, int]:
    kinds = [p["kind"] for p in planned]
    return {kind: kinds.count(kind) for kind in ("approve", "reject", "return", "screen_out")}


def _public(p: dict[str, Any]) -> dict[str, Any]:
    return {"submission": p["submission"].external_id, "worker": p["worker"], "decision": p["kind"],
            "rejection_category": p["category"], "message": p["message"], "evidence": p["evidence"]}


def _sync_brief(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {k: summary[k] for k in ("submissions", "by_status", "unknown_participants", "slots_released")}


def decision_resolve(*, decision: Decision, done: bool, note: str = "") -> Decision:
    """A person's answer for a decision whose outcome was unknown: done on the platform, or not (then it may be sent
    again by a later run: it goes back to pending)."""
    if decision.state != CallState.UNKNOWN:
        raise ApplicationError(f"Decision on {decision.submission.external_id} is {decision.state}, not unknown.",
                               code=WRONG_STATE, status=409)
    Decision.objects.filter(pk=decision.pk, state=CallState.UNKNOWN).update(
        state=CallState.CONFIRMED if done else CallState.PENDING, error=note or decision.error)
    decision.refresh_from_db()
    return decision
