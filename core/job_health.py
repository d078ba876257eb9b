"""Jobs that end: a worker that dies (SIGKILL, out of memory, a lost machine) leaves its job "running" and its
message unacknowledged until the broker's visibility timeout (an hour in production). Here:

- `heartbeat`: while a job runs, a thread of the worker stamps `heartbeat_at` every STYLECROWD_JOB_HEARTBEAT_SECONDS;
- `jobs_reap_stale` (a beat task, every minute): a running job without a heartbeat for STYLECROWD_JOB_STALE_SECONDS,
  or running past its kind's time limit (STYLECROWD_JOB_TIME_LIMITS), is sent again while it has attempts left
  (STYLECROWD_JOB_MAX_ATTEMPTS), else marked failed with the reason;
- `jobs_send_unsent` (the same beat task): a job whose message never left (the broker could not take it: the door
  answered 202 with the job "waiting" instead of a 500; or the sender was lost after the commit) is sent when the
  broker is back (`job_enqueue` marks every job `unsent_since` until the broker took its message: an outbox);
- `attempts_exhausted`: a delivery of a job whose earlier deliveries all died fails it instead of running it again
  (a task that kills its worker is no longer redelivered forever).
Tasks are idempotent and a finished job is never run again, so a late redelivery of the original message is
harmless.
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kombu.exceptions
from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core.models import Job

logger = logging.getLogger(__name__)
# What a publish raises when the broker cannot be reached (after Celery's own publish retries): kombu's
# OperationalError, which wraps the transport's connection errors (not a bare socket error: in the eager demo the
# task runs inside the publish, and its own network errors are the job's failure, not the broker's).
BROKER_ERRORS = (kombu.exceptions.OperationalError,)
UNSENT_MESSAGE = ("Waiting: the task queue (broker) could not be reached, so this job has not been sent to a worker "
                  "yet. It is stored and is sent as soon as the queue is back.")


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def max_attempts() -> int:
    return int(_setting("STYLECROWD_JOB_MAX_ATTEMPTS", 3))


def attempts_exhausted(job: Job) -> bool:
    """True (and the job failed with the reason) when the job is still marked running by deliveries that died and
    has no attempt left."""
    if job.status != Job.Status.RUNNING or job.attempts < max_attempts():
        return False
    reason = (f"The worker running this job stopped {job.attempts} times (killed or out of memory); "
              "it is not tried again. See the worker's log.")
    Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=Job.Status.FAILED, error=reason, finished_at=timezone.now())
    logger.error("job %s (%s): %s", job.pk, job.kind, reason)
    return True


@contextmanager
def heartbeat(job_id: int) -> Iterator[None]:
    """Stamp the job's heartbeat from a thread while the body runs (its own database connection)."""
    interval = float(_setting("STYLECROWD_JOB_HEARTBEAT_SECONDS", 10))
    if settings.CELERY_TASK_ALWAYS_EAGER or interval <= 0:  # the demo: in-process, SQLite, nothing to watch
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(interval):
                Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now())
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval + 5)


def _time_limit(kind: str) -> float:
    limits = _setting("STYLECROWD_JOB_TIME_LIMITS", {})
    return float(limits.get(kind, limits.get("default", 24 * 3600)))


def jobs_reap_stale(*, now: dt.datetime | None = None) -> dict[str, list[int]]:
    """Send the jobs that wait for the broker; send again, or fail, the running jobs whose worker is gone or that
    ran past their time limit."""

    now = now or timezone.now()
    report: dict[str, list[int]] = {"sent": jobs_send_unsent(now=now), **_reap_running(now)}
    return report


def unsent_grace() -> dt.timedelta:
    """How long a job's own send may take before the reaper counts its message as never sent."""
    return dt.timedelta(seconds=float(_setting("STYLECROWD_JOB_UNSENT_GRACE_SECONDS", 10)))


def jobs_send_unsent(*, now: dt.datetime | None = None) -> list[int]:
    """Send the jobs whose message never left (the broker could not take it, or the sender was lost after the
    commit; `job_enqueue`'s outbox mark, older than the grace); stops at the first that still cannot be sent (the
    broker is still away: the next round tries again). Each is claimed under its row lock, so two reapers never send
    one twice."""
    sent: list[int] = []
    waiting = Job.objects.filter(status=Job.Status.CREATED,
                                 unsent_since__lt=(now or timezone.now()) - unsent_grace()).order_by("pk")
    for pk in waiting.values_list("pk", flat=True):
        with transaction.atomic():
            job = waiting.select_for_update(skip_locked=True).filter(pk=pk).first()
            if job is None:
                continue
            try:
                result = current_app.send_task(job.task_name, args=[job.pk, *job.task_args],
                                               **({"queue": job.queue} if job.queue else {}))
            except BROKER_ERRORS as exc:
                logger.warning("job %s still waits for the broker: %s", job.pk, exc)
                break
            Job.objects.filter(pk=pk).update(unsent_since=None, message="", celery_task_id=result.id or "")
        sent.append(pk)
        logger.info("job %s (%s) sent: the broker is back", job.pk, job.kind)
    return sent


def _reap_running(now: dt.datetime) -> dict[str, list[int]]:
    stale_after = dt.timedelta(seconds=float(_setting("STYLECROWD_JOB_STALE_SECONDS", 60)))
    report: dict[str, list[int]] = {"retried": [], "failed": [], "timed_out": []}
    for job in Job.objects.filter(status=Job.Status.RUNNING).order_by("pk"):
        last_sign = job.heartbeat_at or job.started_at or job.created_at
        if job.started_at and (now - job.started_at).total_seconds() > _time_limit(job.kind):
            minutes = round(_time_limit(job.kind) / 60)
            _fail(job, f"Ran longer than the time limit of {minutes} min for {job.kind} jobs; stopped waiting for it.")
            report["timed_out"].append(job.pk)
            continue
        if now - last_sign < stale_after:
            continue
        if job.attempts >= max_attempts() or not job.task_name:
            _fail(job, f"The worker running this job stopped responding (attempt {job.attempts} of "
                       f"{max_attempts()}); it is not tried again. See the worker's log.")
            report["failed"].append(job.pk)
            continue
        with transaction.atomic():
            claimed = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, attempts=job.attempts).update(
                status=Job.Status.CREATED, heartbeat_at=None,
                message=f"The worker running it stopped; sent again (attempt {job.attempts + 1} of "
                        f"{max_attempts()}).")
            if claimed:
                options = {"queue": job.queue} if job.queue else {}
                transaction.on_commit(lambda job=job, options=options: current_app.send_task(
                    job.task_name, args=[job.pk, *job.task_args], **options))
                report["retried"].append(job.pk)
    return report


def _fail(job: Job, reason: str) -> None:
    Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=Job.Status.FAILED, error=reason, finished_at=timezone.now())
    logger.error("job %s (%s): %s", job.pk, job.kind, reason)
