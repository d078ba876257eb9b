"""A job whose message the broker cannot take is not lost and not a 500 (core/jobs.py `job_unsent`): the researcher's
`POST /api/v1/exports/` answers 202 with the job marked as waiting for the broker (its message and `waiting` say so),
and the reaper's beat task (core/job_health.py `jobs_send_unsent`) sends it when the broker is back.

The live test runs the production shape: gunicorn, a Celery worker with its beat, and a Redis of the test's own on a
free port (never the shared one), stopped while the researcher starts the export and started again afterwards."""
from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import time
from pathlib import Path

import kombu.exceptions
import pytest
import redis
import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from core.job_health import jobs_send_unsent
from core.job_waiting import job_waiting
from core.jobs import job_create, job_enqueue
from core.models import Job
from scoring.models import BenchmarkExport
from tests.gunicorn_server import REPO, free_port, gunicorn, server_database_url
from tests.scoring.export.test_services import _validated_study

WORKER_SETTINGS = '''
from config.settings.test import *  # noqa: F401,F403

# Only the reaper, every second (production: every 30 s).
CELERY_BEAT_SCHEDULE = {"core-jobs-reap-stale": {"task": "core.jobs_reap_stale", "schedule": 1.0}}
'''


@pytest.mark.django_db
def test_an_unsent_job_is_stored_as_waiting_and_sent_by_the_reaper(api, admin_client, tmp_path, settings, monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _validated_study()
    from scoring.celery_tasks.export import benchmark_export_task

    def broker_down(*args, **kwargs):
        raise kombu.exceptions.OperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")

    monkeypatch.setattr(benchmark_export_task, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post("/api/v1/exports/", {"format": "jsonl", "status": "validated", "study": study.slug},
                           format="json")
    assert started.status_code == 202, started.content  # today: the broker's error, a 500
    # (the test's transaction sends on commit after the 202 was written; the live test below reads the 202 itself)
    body = api.get(f"/api/v1/jobs/{started.json()['job']['id']}/").json()
    assert body["status"] == "created" and "could not be reached" in body["message"]
    assert "waits for the task queue (broker)" in body["waiting"]["text"] and body["waiting"]["workers"] is None
    job = Job.objects.get(pk=body["id"])
    assert job.unsent_since is not None and job.task_name == "scoring.benchmark_export"
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    assert "waits for the task queue (broker)" in page and "is stored, not lost" in page  # the admin says so too

    monkeypatch.undo()
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete("default")
    assert jobs_send_unsent() == []  # within the grace a job's own send may still be under way
    later = timezone.now() + dt.timedelta(seconds=settings.STYLECROWD_JOB_UNSENT_GRACE_SECONDS + 1)
    assert jobs_send_unsent(now=later) == [job.pk]  # the broker is back: sent once, and only once
    assert jobs_send_unsent(now=later) == [] and client.llen("default") == 1
    job.refresh_from_db()
    assert job.unsent_since is None and job.message == "" and job.celery_task_id
    client.delete("default")


@pytest.mark.django_db
def test_a_job_whose_sender_was_lost_after_the_commit_is_sent_by_the_reaper(settings,
                                                                            django_capture_on_commit_callbacks):
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete("default")
    with django_capture_on_commit_callbacks(execute=False):  # the process dies before its on-commit send
        with transaction.atomic():
            job = job_create(kind="doomed", params={})
            job_enqueue(job=job, task="core.jobs_reap_stale")
    job.refresh_from_db()
    assert job.unsent_since is not None and job_waiting(job) is None  # within the grace: nothing to say yet
    later = timezone.now() + dt.timedelta(seconds=settings.STYLECROWD_JOB_UNSENT_GRACE_SECONDS + 1)
    assert "waits for the task queue" in job_waiting(job, now=later)["text"]
    assert jobs_send_unsent(now=later) == [job.pk] and client.llen("default") == 1
    client.delete("default")


def _redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 20
    while True:
        try:
            if redis.Redis(port=port).ping():
                return server
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_export_started_while_the_broker_is_down_waits_and_runs_when_it_is_back(tmp_path: Path):
    media = tmp_path / "media"
    study, _ = _validated_study()
    User.objects.create_superuser("boss", password="a long password for the test")
    port = free_port()
    broker_url = f"redis://127.0.0.1:{port}/0"
    env = {"CELERY_BROKER_URL": broker_url, "CACHE_URL": settings.CACHES["default"]["LOCATION"],
           "STYLECROWD_MEDIA_ROOT": str(media)}
    (tmp_path / "broker_down_settings.py").write_text(WORKER_SETTINGS)
    broker = _redis(port)
    worker_log = tmp_path / "worker.log"
    worker = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "celery"), "-A", "config", "worker", "-B", "-s", str(tmp_path / "beat"),
         "-l", "info", "-c", "1", "-Q", "default", "-n", "broker-down@%h", "--without-gossip", "--without-mingle"],
        cwd=REPO, stdout=worker_log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, **env, "DJANGO_SETTINGS_MODULE": "broker_down_settings", "DATABASE_URL":
             server_database_url(), "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    try:
        with gunicorn(settings_module="config.settings.test", env=env, log=tmp_path / "gunicorn.log") as base:
            _stop(broker)  # the broker goes away
            started = time.monotonic()
            response = requests.post(f"{base}/api/v1/exports/", json={"format": "jsonl", "status": "validated",
                                                                       "study": study.slug},
                                     auth=("boss", "a long password for the test"), timeout=60)
            took = time.monotonic() - started
            assert response.status_code == 202, response.text  # today: 500, and the job row left "created"
            job_id = response.json()["job"]["id"]
            assert "could not be reached" in response.json()["job"]["message"] and took < 30
            assert Job.objects.get(pk=job_id).unsent_since is not None
            assert not BenchmarkExport.objects.exists()

            broker = _redis(port)  # back, empty: the message was never in it
            deadline = time.monotonic() + 120
            while Job.objects.get(pk=job_id).status not in (Job.Status.DONE, Job.Status.FAILED):
                assert time.monotonic() < deadline, worker_log.read_text()[-3000:]
                time.sleep(0.5)
            job = requests.get(f"{base}/api/v1/jobs/{job_id}/", auth=("boss", "a long password for the test"),
                               timeout=30).json()
    finally:
        _stop(worker)
        _stop(broker)
    assert job["status"] == "done", (job, worker_log.read_text()[-3000:])
    assert job["message"] == "" and job["waiting"] is None
    assert BenchmarkExport.objects.count() == 1 and Job.objects.get(pk=job_id).attempts == 1  # sent once, run once
