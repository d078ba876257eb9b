"""Celery tasks of the agreement part: ids in, one service call, state in a core Job row; acknowledged late and
idempotent, so a worker killed mid-task is harmless (the message is redelivered and the run recomputed)."""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from scoring.agreement.aggregation import aggregation_execute
from scoring.agreement.filtering import filter_run_execute
from scoring.agreement.posterior_fit import posterior_refit_all
from scoring.agreement.runs import agreement_run_execute

__all__ = ["agreement_compute_task", "filter_run_task", "aggregation_task", "posterior_refit_task"]


# `run_id`: the run is the one that holds the job (AgreementRun.job); the id travels for the logs and the broker.
@shared_task(name="scoring.agreement_compute", acks_late=True, reject_on_worker_lost=True)
def agreement_compute_task(job_id: int, run_id: int) -> int:
    with job_running(job_id) as job:
        if job is None:
            return run_id
        job.result = agreement_run_execute(job=job)
    return run_id


# `legacy_params`: messages queued before the parameters were read from the job's row carried them too; the row
# holds the same dict, so they are ignored.
@shared_task(name="scoring.filter_instances", acks_late=True, reject_on_worker_lost=True)
def filter_run_task(job_id: int, legacy_params: dict | None = None) -> int | None:
    with job_running(job_id) as job:
        if job is None:
            return None
        job.result = filter_run_execute(job=job)
    return job_id


@shared_task(name="scoring.aggregate_crowd", acks_late=True, reject_on_worker_lost=True)
def aggregation_task(job_id: int, legacy_params: dict | None = None) -> int | None:
    with job_running(job_id) as job:
        if job is None:
            return None
        job.result = aggregation_execute(job=job)
    return job_id


@shared_task(name="scoring.posterior_refit", acks_late=True, reject_on_worker_lost=True)
def posterior_refit_task() -> list[dict]:
    """Periodic (celery beat, every 5 minutes: CELERY_BEAT_SCHEDULE): the posterior stopping rule's parameters of
    every active adaptive study with a posterior stop, refitted on its answers so far (scoring/agreement/
    posterior_fit.py). Safe to run twice: it recomputes and replaces."""
    return posterior_refit_all()
