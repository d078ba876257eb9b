"""Celery tasks of the platforms app: they take an id, call one service, and record state on the row they read.

Jobs that send decisions, pay or message people are safe to deliver twice: every call they make is a stored row
first, claimed under a lock, and a second delivery finds it sent (or its outcome unknown), never sends it again."""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from platforms.models import PlatformAccount
from platforms.services.jobs import platform_job_execute
from platforms.services.lists import block_list_sync
from platforms.services.retention import retention_apply_execute, retention_apply_start
from platforms.services.sync import sync_published
from platforms.services.webhooks import webhook_event_process, webhooks_drain


@shared_task(acks_late=True, name="platforms.job")
def platform_job_task(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is None:
            return
        job.result = platform_job_execute(job=job)


@shared_task(acks_late=True, name="platforms.webhook_event_process")
def webhook_event_process_task(event_id: int) -> dict:
    return webhook_event_process(event_id=event_id)


@shared_task(acks_late=True, name="platforms.webhooks_drain")
def webhooks_drain_task() -> dict:
    """Beat, every minute: webhook events waiting (over their account's rate, or the broker was down) are queued."""
    return webhooks_drain()


@shared_task(acks_late=True, name="platforms.sync_published")
def sync_published_task() -> dict:
    """Beat's fallback to webhooks (settings.PLATFORM_SYNC_SECONDS)."""

    return sync_published()


@shared_task(acks_late=True, name="platforms.block_list_sync")
def block_list_sync_task(account_id: int) -> dict:
    account = PlatformAccount.objects.filter(pk=account_id).first()
    return block_list_sync(account=account) if account and account.block_list_id else {}


@shared_task(acks_late=True, name="platforms.retention_apply")
def retention_apply_task(job_id: int | None = None) -> dict:
    """Daily (CELERY_BEAT_SCHEDULE): apply retention to every study whose period has passed, its summary on a
    status row (a beat delivery makes its own row)."""
    if job_id is None:
        job_id = retention_apply_start(created_by="beat").pk
    with job_running(job_id) as job:
        if job is None:
            return {}
        job.result = retention_apply_execute(job=job)
        return job.result
