"""Celery task of model annotators: the run's id in, one service call, state in a core Job row.

Queued explicitly on `gpu` (a local model) or `default` (an endpoint model: I/O only) by `model_run_start`; the
queue is stored on the job, so a redelivery goes to the same queue. Idempotent: answered questions are skipped.
"""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from scoring.model_annotators.runs import model_run_execute

__all__ = ["model_run_execute_task"]


@shared_task(name="scoring.model_annotators.run", acks_late=True, reject_on_worker_lost=True)
def model_run_execute_task(job_id: int, run_id: int) -> int:
    with job_running(job_id) as job:
        if job is None:
            return run_id
        job.result = model_run_execute(job=job)
    return run_id
