"""A task that kills the worker process running it, on every delivery (loaded by the worker tests only)."""
from __future__ import annotations

import os
import signal

from celery import shared_task

from core.jobs import job_running


@shared_task(name="tests.doomed", acks_late=True, reject_on_worker_lost=True)
def kill_own_worker_task(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is None:
            return
        os.kill(os.getpid(), signal.SIGKILL)
