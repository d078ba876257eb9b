"""Prolific's webhooks: the subscription (set up once per account), and each delivery — checked, recorded once,
processed in Celery.

A delivery carries `X-Prolific-Request-Signature`: base64(HMAC-SHA256(secret, timestamp + raw body)) with the
workspace's secret, and `X-Prolific-Request-Timestamp` (UNIX seconds). A bad signature or a stale timestamp is
refused and nothing is recorded. Each event is stored under a unique key (Prolific's `X-Event-ID`, or the body's
SHA-256 when a delivery has none), so a redelivery or a restart cannot process it twice."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.error_codes import INVALID
from core.errors import ApplicationError
from core.jobs import registered_task
from platforms.backends import backend_class, backend_for
from platforms.crypto import secret_decrypt, secret_encrypt
from platforms.error_codes import WEBHOOK_REFUSED
from platforms.models import PlatformAccount, PlatformStudy, WebhookEvent
from platforms.services.erasure import erased_scrub
from platforms.services.sync import submission_apply

EVENT_TYPE = "submission.status.change"


def webhook_signature(*, secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def _refused(message: str) -> ApplicationError:
    return ApplicationError(message, code=WEBHOOK_REFUSED, status=403)


def webhook_receive(*, account_name: str, headers: dict[str, str], body: bytes) -> tuple[WebhookEvent, bool]:
    """Check and record one delivery; returns (event, created). Processing is queued once the row is committed."""
    account = PlatformAccount.objects.filter(name=account_name).first()
    if account is None or not account.webhook_secret_encrypted or not backend_class(account.platform).WEBHOOKS:
        raise _refused("Unknown webhook endpoint.")
    signature = headers.get("X-Prolific-Request-Signature", "")
    timestamp = headers.get("X-Prolific-Request-Timestamp", "")
    if not signature or not timestamp:
        raise _refused("Missing X-Prolific-Request-Signature or X-Prolific-Request-Timestamp.")
    try:
        sent_at = float(timestamp)
    except ValueError:
        raise _refused("X-Prolific-Request-Timestamp is not a UNIX time.") from None
    expected = webhook_signature(secret=secret_decrypt(account.webhook_secret_encrypted), timestamp=timestamp,
                                 body=body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise _refused("Bad signature.")
    if abs(time.time() - sent_at) > settings.PLATFORM_WEBHOOK_TOLERANCE_SECONDS:
        raise _refused("Stale delivery: its timestamp is too far from this server's clock.")
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ApplicationError("Body: not JSON.", code=INVALID) from None
    if not isinstance(payload, dict):
        raise ApplicationError("Body: not a JSON object.", code=INVALID)
    event_id = (headers.get("X-Event-ID") or "").strip()[:128] or "sha256:" + hashlib.sha256(body).hexdigest()
    # A delivery about a person who asked for erasure is kept with their person key in place of the id.
    payload = erased_scrub(platform=account.platform, value=payload)
    try:
        with transaction.atomic():
            event = WebhookEvent.objects.create(
                account=account, event_id=event_id, event_type=str(payload.get("event_type", ""))[:64],
                resource_id=str(payload.get("resource_id", ""))[:64], status=str(payload.get("status", ""))[:32],
                payload=payload)
            process = registered_task("platforms.webhook_event_process")
            # If the broker is down the event is still recorded; the scheduled sync is the fallback.
            transaction.on_commit(lambda: process.delay(event.pk), robust=True)
    except IntegrityError:
        return WebhookEvent.objects.get(account=account, event_id=event_id), False
    return event, True


def webhook_event_process(*, event_id: int) -> dict[str, Any]:
    """Apply one recorded event: the submission is read from Prolific (its study, its status now) and applied as a
    sync would. Runs at most once per event (the row's state is claimed first)."""

    with transaction.atomic():
        claimed = WebhookEvent.objects.filter(pk=event_id, state=WebhookEvent.State.RECEIVED).update(
            state=WebhookEvent.State.PROCESSED, processed_at=timezone.now())
    if not claimed:
        return {"event": event_id, "processed": False}
    event = WebhookEvent.objects.select_related("account").get(pk=event_id)
    if event.event_type != EVENT_TYPE or not event.resource_id:
        WebhookEvent.objects.filter(pk=event_id).update(state=WebhookEvent.State.IGNORED)
        return {"event": event_id, "processed": False, "ignored": event.event_type}
    backend = backend_for(event.account)
    try:
        info, study_id = backend.submission(None, event.resource_id)
        platform_study = PlatformStudy.objects.filter(account=event.account, external_id=study_id).select_related(
            "study", "account").first()
        if platform_study is None:
            WebhookEvent.objects.filter(pk=event_id).update(state=WebhookEvent.State.IGNORED)
            return {"event": event_id, "processed": False, "ignored": "not a study of ours"}
        result = submission_apply(platform_study=platform_study, info=info, backend=backend)
    except Exception as exc:
        WebhookEvent.objects.filter(pk=event_id).update(state=WebhookEvent.State.FAILED, error=str(exc)[:500])
        raise
    finally:
        backend.close()
    return {"event": event_id, "processed": True, **result}


def webhook_setup(*, account: PlatformAccount, target_url: str) -> dict[str, Any]:
    """Create the workspace's signing secret (stored encrypted), subscribe to submission status changes at
    `target_url` and confirm the subscription."""
    if not backend_class(account.platform).WEBHOOKS:
        raise ApplicationError(f"Webhooks: Prolific accounts only ({account.get_platform_display()} studies are "
                               "synced).", field="account")
    if not account.workspace_id:
        raise ApplicationError(f"Account {account.name}: a workspace id is needed for webhooks.", field="workspace_id")
    if not target_url.startswith("https://"):
        raise ApplicationError("Target URL: Prolific delivers only to a public https:// address.", field="url")
    backend = backend_for(account)
    try:
        secret = backend.webhook_secret_create()
        PlatformAccount.objects.filter(pk=account.pk).update(webhook_secret_encrypted=secret_encrypt(secret))
        subscription_id = backend.webhook_subscribe(event_type=EVENT_TYPE, target_url=target_url)
    finally:
        backend.close()
    PlatformAccount.objects.filter(pk=account.pk).update(webhook_subscription_id=subscription_id,
                                                         webhook_url=target_url)
    return {"account": account.name, "subscription": subscription_id, "event_type": EVENT_TYPE, "url": target_url}


def webhook_secret_set(*, account: PlatformAccount, secret: str) -> None:
    """Store a secret created elsewhere (Prolific's web app), encrypted."""
    PlatformAccount.objects.filter(pk=account.pk).update(webhook_secret_encrypted=secret_encrypt(secret))
