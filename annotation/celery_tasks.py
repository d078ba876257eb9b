"""Celery tasks of the annotation app. They call one service each and are idempotent (acks_late)."""
from __future__ import annotations

from celery import shared_task

from annotation.services.engine import reservations_release_expired
from annotation.services.writing_signals.jobs import writing_signals_execute, writing_signals_refresh
from core.jobs import job_running


@shared_task(acks_late=True, name="annotation.release_expired_reservations")
def release_expired_reservations_task(job_id: int | None = None) -> dict[str, int]:
    """Periodic (celery beat, every minute: CELERY_BEAT_SCHEDULE) or on demand with a Job row.

    Safe to run twice or concurrently: it only releases what is overdue and unanswered. The engine never
    depends on it (an expired reservation never counts as a holder); it moves sessions to `expired`, among them
    batches whose first answer did not arrive within the study's grace period (a bot farm's hoarded slots)."""
    if job_id is None:
        return reservations_release_expired()
    with job_running(job_id) as job:
        if job is None:
            return {}
        job.result = reservations_release_expired()
        return job.result


@shared_task(acks_late=True, name="annotation.writing_signals")
def writing_signals_task(job_id: int) -> None:
    """Measure a rewrite study's writing signals and apply its auto-reject rule (started by
    `writing_signals_start`)."""

    with job_running(job_id) as job:
        if job is None:
            return
        job.result = writing_signals_execute(job=job)


@shared_task(acks_late=True, name="annotation.writing_signals_refresh")
def writing_signals_refresh_task() -> dict:
    """Periodic (celery beat, every 5 minutes): the signals that need no model, for active rewrite studies with new
    rewrites, so the review queue shows their flags. Safe to run twice: it recomputes and replaces."""

    return writing_signals_refresh()
