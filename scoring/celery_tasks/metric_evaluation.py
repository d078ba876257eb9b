"""Celery task of the metric meta-evaluation: ids in, one service call, state in a core Job row.

`metric_evaluation_start` queues it on the `gpu` queue when a model metric is involved (a GPU machine runs
`celery -A config worker -Q gpu`), on `default` otherwise. Idempotent: a finished evaluation is not recomputed.
"""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from scoring.metric_evaluation.services import metric_evaluation_execute

__all__ = ["metric_evaluation_execute_task"]


@shared_task(name="scoring.evaluate_metrics", acks_late=True, reject_on_worker_lost=True)
def metric_evaluation_execute_task(job_id: int, evaluation_id: int) -> int:
    with job_running(job_id) as job:
        if job is None:
            return evaluation_id
        job.result = metric_evaluation_execute(job=job)
    return evaluation_id
