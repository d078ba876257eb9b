"""Celery tasks of the tasks app: they take the job's id, call the job's `<thing>_execute` service (which reads
its parameters from the row), and record state on the core.Job row."""
from __future__ import annotations

from celery import shared_task

from core.jobs import job_running
from tasks.services.uploads import corpus_import_execute, instances_generate_execute


@shared_task(acks_late=True, name="tasks.corpus_import")
def corpus_import_task(job_id: int) -> None:
    """Import uploaded files (saved under MEDIA_ROOT by `corpus_import_start`)."""

    with job_running(job_id) as job:
        if job is None:
            return
        job.result = corpus_import_execute(job=job)


@shared_task(acks_late=True, name="tasks.instances_generate")
def instances_generate_task(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is None:
            return
        job.result = instances_generate_execute(job=job)
