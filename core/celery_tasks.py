"""Celery tasks of core: the beat task that ends jobs whose worker died (core/job_health.py)."""
from __future__ import annotations

from celery import shared_task

from core.erasure import participant_erase_execute
from core.job_health import jobs_reap_stale
from core.jobs import job_running


@shared_task(name="core.jobs_reap_stale")
def jobs_reap_stale_task() -> dict:
    return jobs_reap_stale()


@shared_task(acks_late=True, name="core.participant_erase")
def participant_erase_task(job_id: int) -> None:
    """Erase one person's data (core/erasure.py; the API's door)."""
    with job_running(job_id) as job:
        if job is None:
            return
        job.result = participant_erase_execute(job=job)
