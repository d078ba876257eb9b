"""Prolific's webhooks: the subscription (set up once per account), and each delivery — checked, recorded once,
processed in Celery at a bounded rate.

A delivery carries `X-Prolific-Request-Signature`: base64(HMAC-SHA256(secret, timestamp + raw body)) with the
workspace's secret, and `X-Prolific-Request-Timestamp` (UNIX seconds). Checked in this order, each before any work
the next needs: the body's size (PLATFORM_WEBHOOK_MAX_BODY_BYTES; the door reads at most one byte more), the account,
the timestamp (a finite number: `nan`, `inf`, `1e999` and text are refused), the signature, its freshness
(PLATFORM_WEBHOOK_TOLERANCE_SECONDS), and only then the JSON (parsed with the one JSON rule's depth guard: a 400,
never a 500). A refusal records nothing.

Each event is stored under what Prolific signed — the HMAC of the timestamp and the body (`signed_digest`, unique per
account in the database) — never under the unsigned `X-Event-ID`: a captured delivery replayed with new event ids,
inside the tolerance window or after it, stores nothing new and calls the platform no more.

Processing (one submission read from the platform per event) is rate-limited per account
(PLATFORM_WEBHOOK_PROCESS_RATE, a fixed window counted in the shared cache): an event within the rate is queued at
once; one beyond it stays `received` in the database — the queue — and `webhooks_drain` (beat, every minute) queues
the oldest waiting events of each account as the rate allows. Nothing is dropped; a flood is only spread out."""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import math
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from redis.exceptions import RedisError

from core.error_codes import INVALID, PARSE_ERROR, TOO_LARGE
from core.errors import ApplicationError
from core.jobs import registered_task
from core.json_guard import JsonRefused, json_parse
from platforms.backends import backend_class, backend_for
from platforms.crypto import secret_decrypt, secret_encrypt
from platforms.error_codes import WEBHOOK_REFUSED
from platforms.models import PlatformAccount, PlatformStudy, WebhookEvent
from platforms.services.erasure import erased_scrub
from platforms.services.sync import submission_apply

EVENT_TYPE = "submission.status.change"
PROCESS_TASK = "platforms.webhook_event_process"
logger = logging.getLogger(__name__)


def webhook_signature(*, secret: str, timestamp: str, body: bytes) -> str:
    return base64.b64encode(_hmac(secret=secret, timestamp=timestamp, body=body)).decode()


def _hmac(*, secret: str, timestamp: str, body: bytes) -> bytes:
    return hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()


def _refused(message: str) -> ApplicationError:
    return ApplicationError(message, code=WEBHOOK_REFUSED, status=403)


def webhook_body_too_large(size: int) -> ApplicationError:
    return ApplicationError(f"Body: more than {settings.PLATFORM_WEBHOOK_MAX_BODY_BYTES} bytes (Prolific's events are "
                            f"small); {size} bytes refused unread.", code=TOO_LARGE, status=413)


def _timestamp(value: str) -> float:
    """The signed UNIX time: a finite number, else a refusal (nan would pass any freshness comparison)."""
    try:
        sent_at = float(value)
    except ValueError:
        raise _refused("X-Prolific-Request-Timestamp is not a UNIX time.") from None
    if not math.isfinite(sent_at):
        raise _refused("X-Prolific-Request-Timestamp is not a finite UNIX time.")
    return sent_at


def _signed_digest(account: PlatformAccount, headers: dict[str, str], body: bytes) -> str:
    """The checked signature's HMAC (hex): the account, the timestamp, the signature and its freshness are checked
    before anything reads the body."""
    if account is None or not account.webhook_secret_encrypted or not backend_class(account.platform).WEBHOOKS:
        raise _refused("Unknown webhook endpoint.")
    signature = headers.get("X-Prolific-Request-Signature", "")
    timestamp = headers.get("X-Prolific-Request-Timestamp", "")
    if not signature or not timestamp:
        raise _refused("Missing X-Prolific-Request-Signature or X-Prolific-Request-Timestamp.")
    sent_at = _timestamp(timestamp)
    digest = _hmac(secret=secret_decrypt(account.webhook_secret_encrypted), timestamp=timestamp, body=body)
    if not hmac.compare_digest(base64.b64encode(digest), signature.encode()):
        raise _refused("Bad signature.")
    if abs(time.time() - sent_at) > settings.PLATFORM_WEBHOOK_TOLERANCE_SECONDS:
        raise _refused("Stale delivery: its timestamp is too far from this server's clock.")
    return digest.hex()


def _payload(body: bytes) -> dict[str, Any]:
    """The body as a JSON object, held to the one JSON rule of every door (core/json_guard.py: its depth guard, a
    400, never a 500)."""
    try:
        payload = json_parse(body)
    except JsonRefused as exc:
        raise ApplicationError(f"Body: {exc.message}", code=PARSE_ERROR) from None
    except ValueError as exc:  # json.JSONDecodeError and a body that is not UTF-8 text
        raise ApplicationError(f"Body: not JSON ({exc}).", code=PARSE_ERROR) from None
    if not isinstance(payload, dict):
        raise ApplicationError("Body: not a JSON object.", code=INVALID)
    return dict(payload)


def webhook_receive(*, account_name: str, headers: dict[str, str], body: bytes) -> tuple[WebhookEvent, bool]:
    """Check and record one delivery; returns (event, created). Processing is queued, within the account's rate,
    once the row is committed."""
    if len(body) > settings.PLATFORM_WEBHOOK_MAX_BODY_BYTES:
        raise webhook_body_too_large(len(body))
    account = PlatformAccount.objects.filter(name=account_name).first()
    digest = _signed_digest(account, headers, body)
    known = WebhookEvent.objects.filter(account=account, signed_digest=digest).first()
    if known is not None:
        return known, False
    payload = _payload(body)
    event_id = (headers.get("X-Event-ID") or "").strip()[:128]
    # A delivery about a person who asked for erasure is kept with their person key in place of the id.
    payload = erased_scrub(platform=account.platform, value=payload)
    try:
        with transaction.atomic():
            event = WebhookEvent.objects.create(
                account=account, event_id=event_id, signed_digest=digest,
                event_type=str(payload.get("event_type", ""))[:64],
                resource_id=str(payload.get("resource_id", ""))[:64], status=str(payload.get("status", ""))[:32],
                payload=payload)
            if _rate_allows(account.pk):
                # If the broker is down the event is still recorded; webhooks_drain queues it later.
                process = registered_task(PROCESS_TASK)
                transaction.on_commit(lambda: process.delay(event.pk), robust=True)
    except IntegrityError:  # the same delivery, recorded by a concurrent request
        return WebhookEvent.objects.get(account=account, signed_digest=digest), False
    return event, True


def _rate_allows(account_pk: int) -> bool:
    """One more event of the account may be processed in this window (PLATFORM_WEBHOOK_PROCESS_RATE, e.g.
    "60/min"). The shared cache unreachable: allowed (the broker, on the same Redis, decides then)."""
    rate = settings.PLATFORM_WEBHOOK_PROCESS_RATE
    if not rate:
        return True
    count, _, unit = rate.partition("/")
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}[(unit or "m")[0]]
    key = f"webhooks:process:{account_pk}:{int(time.time() // seconds)}"
    try:
        cache.add(key, 0, timeout=seconds + 1)
        return cache.incr(key) <= int(count)
    except ValueError:  # the key expired between add and incr
        cache.set(key, 1, timeout=seconds + 1)
        return True
    except (RedisError, OSError) as exc:
        logger.warning("webhook processing rate not counted (%s: %s)", type(exc).__name__, exc)
        return True


def webhooks_drain(*, older_than_seconds: float = 30.0) -> dict[str, Any]:
    """Queue the events still waiting (`received`: over the rate when they came, or the broker was down), oldest
    first, each account within its rate. Beat runs it every minute; a message sent twice is harmless (processing
    claims the row first)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    waiting = WebhookEvent.objects.filter(state=WebhookEvent.State.RECEIVED, received_at__lt=cutoff)
    process = registered_task(PROCESS_TASK)
    queued = 0
    for account_pk in waiting.values_list("account", flat=True).distinct():
        for pk in waiting.filter(account=account_pk).order_by("received_at", "pk").values_list("pk", flat=True):
            if not _rate_allows(account_pk):
                break
            process.delay(pk)
            queued += 1
    return {"queued": queued, "waiting": waiting.count() - queued}


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
