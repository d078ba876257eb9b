"""Celery tasks of core: the beat task that ends jobs whose worker died (core/job_health.py)."""
from __future__ import annotations

from celery import shared_task

from core.job_health import jobs_reap_stale


@shared_task(name="core.jobs_reap_stale")
def jobs_reap_stale_task() -> dict:
    return jobs_reap_stale()
