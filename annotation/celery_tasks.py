"""Celery tasks of the annotation app. They call one service each and are idempotent (acks_late)."""
from __future__ import annotations

from celery import shared_task

from annotation.services.engine import reservations_release_expired
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
