"""Celery task of benchmark exports started from the admin or the API (scoring/export/jobs.py)."""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from scoring.export.jobs import export_execute

__all__ = ["benchmark_export_task"]


@shared_task(name="scoring.benchmark_export", acks_late=True, reject_on_worker_lost=True)
def benchmark_export_task(job_id: int) -> int | None:
    with job_running(job_id) as job:
        if job is None:
            return None
        job.result = export_execute(job=job)
    return job_id
