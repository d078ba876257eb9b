"""Celery task of the metric meta-evaluation: ids in, one service call, state in a core Job row.

`metric_evaluation_start` queues it on the `gpu` queue when a model metric is involved (a GPU machine runs
`celery -A config worker -Q gpu`), on `default` otherwise. Idempotent: a finished evaluation is not recomputed.
"""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running

__all__ = ["metric_evaluation_execute_task"]


@shared_task(name="scoring.evaluate_metrics", acks_late=True, reject_on_worker_lost=True)
def metric_evaluation_execute_task(job_id: int, evaluation_id: int) -> int:
    from scoring.metric_evaluation.services import metric_evaluation_execute, metric_evaluation_summary

    with job_running(job_id) as job:
        if job is None:
            return evaluation_id
        evaluation = metric_evaluation_execute(evaluation_id=evaluation_id, job_id=job_id)
        summary = metric_evaluation_summary(evaluation)
        if (evaluation.results or {}).get("columns"):
            from scoring.metric_evaluation.plots import evaluation_plot_cached

            evaluation_plot_cached(evaluation)  # drawn once, now, not when the page is opened
        job.result = {"evaluation": evaluation.pk, "n_items": summary["n_items"],
                      "rho": {column: row["rho"] for column, row in summary["correlations"].items()}}
    return evaluation_id
