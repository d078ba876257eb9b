"""Jobs never wait silently: a job whose message the broker could not take says so at once (it waits for the
broker; core/job_health.py sends it when the broker is back), and a job that no worker has taken within
STYLECROWD_JOB_UNCLAIMED_SECONDS (default 5) says so on its pages and in the API's job body, naming the queue it
waits on and the command that starts a worker for it.

Whether any worker serves that queue is asked of the workers themselves (Celery's `inspect().active_queues()`, a
broadcast answered within a second), at most once per STYLECROWD_JOB_WORKER_CHECK_SECONDS per queue (the answer is
kept in the cache), and only for jobs that already wait: a page of running or finished jobs asks nothing.
"""
from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from core.job_health import UNSENT_MESSAGE, unsent_grace
from core.models import Job

logger = logging.getLogger(__name__)
ONE_MACHINE_COMMAND = "celery -A config worker -Q {queues}"


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


def job_queue_name(job: Job) -> str:
    """The queue the job was sent to (`default` unless its start service chose another)."""
    return job.queue or job.params.get("queue") or settings.CELERY_TASK_DEFAULT_QUEUE


def queue_commands(queue: str) -> dict[str, str]:
    """The worker command that serves `queue`, and the one-machine command that serves every queue."""
    queues = list(dict.fromkeys(_setting("CELERY_QUEUE_NAMES", (settings.CELERY_TASK_DEFAULT_QUEUE, "gpu"))))
    return {"queue_only": ONE_MACHINE_COMMAND.format(queues=queue),
            "one_machine": ONE_MACHINE_COMMAND.format(queues=",".join(queues))}


def workers_serving(queue: str) -> int | None:
    """How many running workers consume `queue` (None when that cannot be told: the broker did not answer)."""
    key = f"job-waiting:workers:{queue}"
    try:
        cached = cache.get(key)
    except Exception:  # noqa: BLE001 - the cache is an optimisation here; an outage must not break the page
        cached = None
    if cached is not None:
        return int(cached)

    try:
        # Its own broker connection, closed after the answer: a pooled one would go back to kombu's pool with the
        # reply consumer's BRPOP outstanding.
        with current_app.connection_for_write() as connection:
            replies = current_app.control.inspect(
                timeout=float(_setting("STYLECROWD_JOB_INSPECT_TIMEOUT", 1.0)), connection=connection)
            active = replies.active_queues() or {}
    except Exception as exc:  # noqa: BLE001 - a broker that does not answer: say so in words, not a 500
        logger.warning("could not ask the workers which queues they serve: %s", exc)
        return None
    count = sum(1 for queues in active.values() if any(q.get("name") == queue for q in queues or []))
    try:
        cache.set(key, count, timeout=float(_setting("STYLECROWD_JOB_WORKER_CHECK_SECONDS", 10)))
    except Exception:  # noqa: BLE001 - see above
        pass
    return count


def job_waiting(job: Job, *, now: Any = None) -> dict[str, Any] | None:
    """For a job still "created" past the threshold: how long it has waited, its queue, whether any worker serves
    that queue, the commands, and one sentence for people. None for any other job (and in the eager demo)."""
    if job.status != Job.Status.CREATED or settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    waited = ((now or timezone.now()) - job.created_at).total_seconds()
    if job.unsent_since is not None and (job.message == UNSENT_MESSAGE
                                         or (now or timezone.now()) - job.unsent_since > unsent_grace()):
        return _unsent(job, int(waited))
    if waited < float(_setting("STYLECROWD_JOB_UNCLAIMED_SECONDS", 5)):
        return None
    queue = job_queue_name(job)
    commands = queue_commands(queue)
    workers = workers_serving(queue)
    seconds = int(waited)
    if workers == 0:
        text = (f"No worker has taken this job in {seconds} s: no running worker serves the “{queue}” queue it waits "
                f"on. Start one with `{commands['queue_only']}` (on one machine, `{commands['one_machine']}` "
                "serves every queue); the job starts as soon as it runs.")
    elif workers:
        text = (f"No worker has taken this job in {seconds} s: {workers} worker(s) serve the “{queue}” queue and are "
                "busy with earlier jobs; it starts when one is free.")
    else:
        text = (f"No worker has taken this job in {seconds} s. It waits on the “{queue}” queue: check that a worker "
                f"serving it runs (`{commands['queue_only']}`; on one machine `{commands['one_machine']}`).")
    return {"seconds": seconds, "queue": queue, "workers": workers, "command": commands["queue_only"],
            "one_machine_command": commands["one_machine"], "text": text}


def _unsent(job: Job, seconds: int) -> dict[str, Any]:
    """A job whose message the broker could not take: it waits for the broker, not for a worker (no worker is
    asked: the broker that would carry the question is away)."""
    queue = job_queue_name(job)
    commands = queue_commands(queue)
    text = (f"This job waits for the task queue (broker), which could not be reached when it was started "
            f"{seconds} s ago: it is stored, not lost, and is sent to the “{queue}” queue as soon as the broker is "
            "back (checked every 30 s by celery beat). Check that the broker (Redis, CELERY_BROKER_URL) runs.")
    return {"seconds": seconds, "queue": queue, "workers": None, "command": commands["queue_only"],
            "one_machine_command": commands["one_machine"], "text": text}
