"""Messaging a study's participants through the platform (Prolific messages, MTurk NotifyWorkers in chunks of its
limit). A dry run by default; each call is a stored row (text, recipients, state) written before the call, and a
recipient who already got the same text is not messaged again unless asked."""
from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from platforms.backends import backend_for
from platforms.clients.errors import UNKNOWN, PlatformCallError
from platforms.error_codes import NO_RECIPIENTS
from platforms.models import CallState, PlatformMessage, PlatformStudy, PlatformSubmission

BODY_MAX = 4096


def _recipients(platform_study: PlatformStudy, to: list[str] | None) -> list[str]:
    known = list(dict.fromkeys(PlatformSubmission.objects.filter(platform_study=platform_study)
                               .order_by("started_at", "pk").values_list("worker_id", flat=True)))
    if not to:
        if not known:
            raise ApplicationError(f"Study {platform_study.study.slug} has no participants on the platform yet "
                                   "(sync first).", code=NO_RECIPIENTS, status=409, field="to")
        return known
    unknown = [w for w in to if w not in known]
    if unknown:
        raise ApplicationError(f"To: {', '.join(unknown[:5])} did not take part in this study on the platform.",
                               code=NOT_FOUND, status=404, field="to")
    return list(dict.fromkeys(to))


def platform_message(*, platform_study: PlatformStudy, body: str, subject: str = "", to: list[str] | None = None,
                     apply: bool = False, resend: bool = False, created_by: str = "") -> dict[str, Any]:
    body = (body or "").strip()
    if not body:
        raise ApplicationError("Body: the message is empty.", field="body")
    if len(body) > BODY_MAX:
        raise ApplicationError(f"Body: {len(body)} characters; at most {BODY_MAX}.", field="body")
    recipients = _recipients(platform_study, to)
    if not resend:
        already = set()
        for row in PlatformMessage.objects.filter(platform_study=platform_study, body=body, subject=subject,
                                                  state__in=[CallState.SENT, CallState.SENDING, CallState.UNKNOWN,
                                                             CallState.CONFIRMED]):
            already |= set(row.recipients)
        skipped = [w for w in recipients if w in already]
        recipients = [w for w in recipients if w not in already]
    else:
        skipped = []
    backend = backend_for(platform_study.account)
    chunks = [recipients[i:i + backend.MESSAGE_CHUNK] for i in range(0, len(recipients), backend.MESSAGE_CHUNK)]
    calls = [backend.message_call(platform_study, chunk, subject, body) for chunk in chunks]
    summary: dict[str, Any] = {"study": platform_study.study.slug, "dry_run": not apply,
                               "recipients": len(recipients), "already_messaged": len(skipped),
                               "calls": [c.describe() for c in calls] if not apply else len(calls)}
    if not apply:
        backend.close()
        return summary
    group = uuid.uuid4()
    with transaction.atomic():
        rows = [PlatformMessage.objects.create(platform_study=platform_study, group_key=group, recipients=chunk,
                                               subject=subject, body=body, created_by=created_by)
                for chunk in chunks]
    sent = failed = unknown = 0
    errors = []
    try:
        for row, call in zip(rows, calls, strict=True):
            PlatformMessage.objects.filter(pk=row.pk).update(state=CallState.SENDING, sent_at=timezone.now())
            try:
                response = backend.send(call)
            except PlatformCallError as exc:
                errors.append(exc.message)
                state = CallState.UNKNOWN if exc.outcome == UNKNOWN else CallState.FAILED
                PlatformMessage.objects.filter(pk=row.pk).update(state=state, error=exc.message)
                if state == CallState.UNKNOWN:
                    unknown += len(row.recipients)
                    break  # never sent again automatically; the rest wait for a person too
                failed += len(row.recipients)
                continue
            PlatformMessage.objects.filter(pk=row.pk).update(
                state=CallState.SENT, response=response if isinstance(response, dict) else {"body": response})
            sent += len(row.recipients)
    finally:
        backend.close()
    return {**summary, "sent": sent, "failed": failed, "unknown": unknown, "errors": errors,
            "message": str(group)}
