"""Celery task of model scoring (score_stel): ids in, one service call, state in a core Job row.

Queued by `score_run_start` on the `gpu` queue when a method loads a model (so a GPU machine can run `celery -A
config worker -Q gpu --concurrency 1` and take only that work), else on the default queue. Idempotent: a computed
run is not recomputed when a message is redelivered.
"""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from scoring.model_scoring.runs import score_run_execute

__all__ = ["score_run_execute_task"]


@shared_task(name="scoring.model_scoring.score_run", acks_late=True, reject_on_worker_lost=True)
def score_run_execute_task(job_id: int, run_id: int) -> int:
    with job_running(job_id) as job:
        if job is None:
            return run_id
        job.result = score_run_execute(job=job)
    return run_id
