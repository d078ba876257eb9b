"""Celery tasks of core: the beat task that ends jobs whose worker died (core/job_health.py)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="core.jobs_reap_stale")
def jobs_reap_stale_task() -> dict:
    from core.job_health import jobs_reap_stale

    return jobs_reap_stale()
