"""Job status rows: created by the door (admin/API/CLI), advanced by the Celery task that runs the work.

Progress is written outside the work's own transaction so the admin can watch it: on PostgreSQL through a
second connection alias (`progress`), elsewhere only when no transaction is open (SQLite would lock).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from celery import Task, current_app
from django.conf import settings
from django.db import DatabaseError, connections, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from core.errors import ApplicationError
from core.job_health import BROKER_ERRORS, UNSENT_MESSAGE, attempts_exhausted, heartbeat
from core.models import FINISHED, Job

ProgressCallback = Callable[[int, int], None]
logger = logging.getLogger(__name__)


def job_failure_reason(exc: BaseException) -> str:
    """One line for the admin and the API: the error's type and first line (the traceback is logged)."""
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def job_create(*, kind: str, params: dict[str, Any], created_by: str = "") -> Job:
    return Job.objects.create(kind=kind, params=params, created_by=created_by)


def job_enqueue(*, job: Job, task: str, args: list[Any] | None = None, queue: str | None = None) -> None:
    """Queue the task registered as `task` (its `@shared_task(name=…)`, e.g. "scoring.agreement_compute") with
    `(job.id, *args)` once the surrounding transaction has committed. By name, so that a service never imports
    its app's `celery_tasks` module (which imports the service: a cycle).

    An outbox: the row is marked unsent (`unsent_since`) in the caller's transaction and cleared once the broker
    took the message, so a message that never left (the broker away, the process or its database connection lost
    between the commit and the send) is found and sent by the reaper (core/job_health.py `jobs_send_unsent`) instead
    of leaving the job "created" forever; the door answers its 202 either way, never a 500."""
    registered = registered_task(task)

    # What to send again if the worker running it dies (core/job_health.py), and that it has not been sent yet.
    Job.objects.filter(pk=job.pk).update(task_name=task, task_args=list(args or []), queue=queue or "",
                                         unsent_since=timezone.now())

    def send() -> None:
        options = {"queue": queue} if queue else {}
        try:
            result = registered.apply_async(args=[job.id, *(args or [])], **options)
        except BROKER_ERRORS as exc:
            job_unsent(job=job, exc=exc)  # stored as waiting, not lost and not a 500: the reaper sends it later
            return
        try:
            Job.objects.filter(pk=job.pk).update(celery_task_id=result.id or "", unsent_since=None)
        except DatabaseError as exc:  # sent; only the mark stays: a later resend finds the job run (idempotent)
            logger.warning("job %s was sent but could not be marked so: %s", job.pk, exc)

    transaction.on_commit(send)


def job_unsent(*, job: Job, exc: BaseException) -> None:
    """The broker could not take the job's message: the job stays "created", marked as waiting for the broker with a
    message for people; `jobs_send_unsent` (the reaper's beat task) sends it when the broker is back."""
    logger.warning("job %s (%s): the broker could not be reached (%s); it waits and is sent when it is back",
                   job.pk, job.kind, job_failure_reason(exc))
    try:
        Job.objects.filter(pk=job.pk, status=Job.Status.CREATED).update(message=UNSENT_MESSAGE)
    except DatabaseError as exc_db:  # the row is marked unsent already (committed): the reaper still sends it
        logger.warning("job %s: its waiting message could not be stored: %s", job.pk, exc_db)
    job.message = UNSENT_MESSAGE


def registered_task(name: str) -> Task:
    """The Celery task registered under `name`; a name no `celery_tasks` module registers fails here, at the start
    service, rather than in a worker after the commit. Looked up as an object (not `send_task`) so that the demo's
    eager Celery runs it in place."""
    if name not in current_app.tasks:
        # The apps' `celery_tasks` modules are imported lazily (config/celery.py's autodiscovery): import them now.
        current_app.loader.import_default_modules()
    try:
        return current_app.tasks[name]
    except KeyError:
        raise LookupError(f"no Celery task is registered as {name!r} (see the apps' celery_tasks modules)") from None


def _progress_alias() -> str | None:
    if "progress" in settings.DATABASES:
        return "progress"
    if not connections["default"].in_atomic_block:
        return "default"
    return None


def job_progress(job_id: int | None, done: int, total: int, message: str = "") -> None:
    if job_id is None:
        return
    alias = _progress_alias()
    if alias is None:
        return
    fields: dict[str, Any] = {"progress_done": done, "progress_total": total}
    if message:
        fields["message"] = message[:300]
    Job.objects.using(alias).filter(pk=job_id).update(**fields)


def progress_for(job_id: int | None, *, every: int = 1) -> ProgressCallback:
    """A callback for services: reports at most once per `every` steps (and at the end)."""
    last = {"done": -every}

    def report(done: int, total: int) -> None:
        if done - last["done"] >= every or done >= total:
            last["done"] = done
            job_progress(job_id, done, total)

    return report


def job_attention_of(result: Any) -> dict[str, Any] | None:
    """What a finished job's result asks a person to check, or None. A job body puts it under "attention" (an object
    with at least "reason", a sentence; the app that made it registers where it is resolved with core.admin's
    `job_link_register("attention", …)`): a money or message job whose call's outcome is unknown. Such a job ends
    "attention", not "done"."""
    attention = result.get("attention") if isinstance(result, dict) else None
    return attention if isinstance(attention, dict) and attention.get("reason") else None


@contextmanager
def job_running(job_id: int) -> Iterator[Job | None]:
    """Marks the job running; done with its result (or "attention" when the result names something a person must
    check: `job_attention_of`) or failed with the error. Yields None when already finished (so a redelivered,
    idempotent task does not run twice), and when the job has used up its attempts: a delivery that finds the job
    still "running" means the worker of the previous one died (killed, out of memory), and after
    STYLECROWD_JOB_MAX_ATTEMPTS such deaths the job is failed instead of redelivered forever."""

    job = Job.objects.get(pk=job_id)
    if job.status in FINISHED or attempts_exhausted(job):
        yield None
        return
    now = timezone.now()
    Job.objects.filter(pk=job_id).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now, attempts=job.attempts + 1, error=""
    )
    job.refresh_from_db()
    try:
        with heartbeat(job_id):
            yield job
    except ApplicationError as exc:
        Job.objects.filter(pk=job_id).update(status=Job.Status.FAILED, error=exc.message, finished_at=timezone.now())
        raise
    except Exception as exc:
        # The page shows one line; the traceback goes to the worker's log.
        logger.exception("job %s (%s) failed", job_id, job.kind)
        Job.objects.filter(pk=job_id).update(
            status=Job.Status.FAILED, error=job_failure_reason(exc), finished_at=timezone.now()
        )
        raise
    else:
        # Progress was written by other statements (maybe another connection): finish from the stored values.
        Job.objects.filter(pk=job_id).update(
            status=Job.Status.ATTENTION if job_attention_of(job.result) else Job.Status.DONE, result=job.result,
            finished_at=timezone.now(),
            progress_done=Greatest(F("progress_done"), F("progress_total")),
        )
