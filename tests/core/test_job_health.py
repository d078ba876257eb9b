"""The reaper's decisions without a worker (the worker tests in tests/scoring/test_worker_agreement.py run it live)."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from core.job_health import jobs_reap_stale
from core.models import Job

pytestmark = pytest.mark.django_db


def _running(**fields) -> Job:
    now = timezone.now()
    return Job.objects.create(kind=fields.pop("kind", "agreement_compute"), status=Job.Status.RUNNING,
                              started_at=fields.pop("started_at", now), heartbeat_at=fields.pop("heartbeat_at", now),
                              task_name="scoring.agreement_compute", task_args=[1], **fields)


def test_fresh_heartbeats_are_left_alone_and_stale_ones_sent_again(settings, django_capture_on_commit_callbacks):
    settings.STYLECROWD_JOB_STALE_SECONDS = 60
    alive = _running(attempts=1)
    gone = _running(attempts=1, heartbeat_at=timezone.now() - dt.timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        report = jobs_reap_stale()
    assert report == {"sent": [], "retried": [gone.pk], "failed": [], "timed_out": []} and len(callbacks) == 1
    gone.refresh_from_db()
    alive.refresh_from_db()
    assert alive.status == Job.Status.RUNNING
    assert gone.status == Job.Status.CREATED and "sent again (attempt 2 of 3)" in gone.message


def test_out_of_attempts_or_past_the_time_limit_is_failed_with_the_reason(settings):
    settings.STYLECROWD_JOB_TIME_LIMITS = {"default": 3600, "corpus_import": 60}
    spent = _running(attempts=3, heartbeat_at=timezone.now() - dt.timedelta(minutes=5))
    slow = _running(kind="corpus_import", attempts=1, started_at=timezone.now() - dt.timedelta(minutes=2))
    report = jobs_reap_stale()
    assert report["failed"] == [spent.pk] and report["timed_out"] == [slow.pk]
    spent.refresh_from_db()
    slow.refresh_from_db()
    assert spent.status == slow.status == Job.Status.FAILED
    assert "stopped responding (attempt 3 of 3)" in spent.error
    assert "time limit of 1 min for corpus_import" in slow.error and slow.finished_at is not None
