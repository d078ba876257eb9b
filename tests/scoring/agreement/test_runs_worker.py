"""A real Celery worker on Redis is killed (SIGKILL, the whole process group) in the middle of an agreement task.
With the production visibility timeout (an hour) the broker would hold the message that long; the heartbeat
reaper (core/job_health.py, a beat task) sees the job's worker is gone within seconds and sends it again, and a
second worker stores exactly the result an uninterrupted run stores. A task that kills its own worker process on
every delivery is failed after STYLECROWD_JOB_MAX_ATTEMPTS deliveries instead of being redelivered forever.

The broker is the tests' own Redis database (never db 0, the production default): it is emptied first."""
from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import redis
from django.conf import settings
from django.db import connection

from annotation.models import Participant, Response, StudyItem
from core.models import Job
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.models import AgreementRun
from tasks.models import Order, Setup, TaskInstance
from tests.factories import CorpusFactory, StudyFactory, component

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]

REPO = Path(settings.BASE_DIR)
N_ITEMS = 2000
K = 5
RESAMPLES = 1000  # enough bootstrap work that the task runs for several seconds: room to kill it mid-way

WORKER_SETTINGS = '''
from config.settings.test import *  # noqa: F401,F403

# The production broker options (visibility timeout: an hour); only the heartbeat is quicker than production's.
STYLECROWD_JOB_HEARTBEAT_SECONDS = 0.5
CELERY_IMPORTS = ["tests.core.doomed_tasks"]
'''
HEARTBEAT_STALE = 3.0  # seconds without a heartbeat before the reaper acts (production: 60)


def broker_db_emptied() -> None:
    """The tests' own Redis database, emptied; refuses db 0 (the README's production database)."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    db = client.connection_pool.connection_kwargs.get("db", 0)
    assert int(db) != 0, "the worker tests empty their broker database: point CELERY_BROKER_URL at another db"
    client.flushdb()


def build_study() -> int:
    study = StudyFactory(slug="worker-kill", annotators_per_item=K, min_correct=3)
    corpus = CorpusFactory(component=component("simplicity"))
    instances = TaskInstance.objects.bulk_create([
        TaskInstance(stel_id=f"QQ_w-{i}", setup=Setup.QUADRUPLE, component=corpus.component, corpus=corpus,
                     position=i, family=f"w-{i}", anchor_1="a", anchor_2="b", sentence_1="c", sentence_2="d",
                     anchor_1_style=1, anchor_2_style=2, sentence_1_style=1, sentence_2_style=2,
                     correct_order=Order.S1_S2)
        for i in range(N_ITEMS)
    ])
    items = StudyItem.objects.bulk_create([
        StudyItem(study=study, instance=inst, external_id=inst.stel_id, position=i, kind="quadruple",
                  component=corpus.component, family=inst.family, correct_answer="S1-S2")
        for i, inst in enumerate(instances)
    ])
    people = Participant.objects.bulk_create([
        Participant(study=study, platform="prolific", external_id=f"W{j}") for j in range(40)
    ])
    rng = np.random.default_rng(11)
    base = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    responses = []
    for i, item in enumerate(items):
        p_correct = rng.uniform(0.3, 0.95)
        for r, person in enumerate(rng.choice(people, size=K, replace=False)):
            answer = "S1-S2" if rng.random() < p_correct else "S2-S1"
            responses.append(Response(study=study, participant=person, study_item=item, answer=answer,
                                      is_correct=answer == "S1-S2", seconds=float(rng.integers(3, 30)),
                                      answered_at=base + dt.timedelta(seconds=i * 10 + r)))
    Response.objects.bulk_create(responses, batch_size=5000)
    return study.pk


def start_worker(tmp_path: Path, name: str) -> subprocess.Popen:
    (tmp_path / "agr_worker_settings.py").write_text(WORKER_SETTINGS)
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "agr_worker_settings",
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
        # The worker must use the test database this test writes to.
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{connection.settings_dict['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "STYLECROWD_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    log = (tmp_path / f"{name}.log").open("w")
    return subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "celery"), "-A", "config", "worker", "-l", "info", "-c", "1", "-P", "prefork",
         "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat", "-Q", "default"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )


def kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=30)


def wait_for(predicate, *, timeout: float, what: str, log: Path | None = None):  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    tail = log.read_text()[-3000:] if log and log.exists() else ""
    raise AssertionError(f"timed out waiting for {what}\n{tail}")


def test_killed_worker_mid_task_then_redelivered_result_equals_uninterrupted(tmp_path: Path, settings) -> None:  # noqa: ANN001
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.STYLECROWD_JOB_STALE_SECONDS = HEARTBEAT_STALE
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] == 3600  # the production path
    broker_db_emptied()
    study_id = build_study()
    from annotation.models import Study

    study = Study.objects.get(pk=study_id)

    # The reference: the same run computed in-process, never interrupted.
    reference = agreement_run_compute(
        run_id=agreement_run_start(study=study, seed=5, resamples=RESAMPLES, enqueue=False).pk)

    first = start_worker(tmp_path, "agr-first")
    try:
        run = agreement_run_start(study=study, seed=5, resamples=RESAMPLES, enqueue=True)
        job_id = run.job_id

        def mid_task() -> bool:
            job = Job.objects.get(pk=job_id)
            return job.status == Job.Status.RUNNING and 0 < job.progress_done < job.progress_total

        wait_for(mid_task, timeout=120, what="the first worker to be in the middle of the task",
                 log=tmp_path / "agr-first.log")
        kill_group(first)
    finally:
        if first.poll() is None:
            kill_group(first)

    job = Job.objects.get(pk=job_id)
    assert job.status == Job.Status.RUNNING and job.attempts == 1
    assert not AgreementRun.objects.get(pk=run.pk).is_computed

    second = start_worker(tmp_path, "agr-second")
    try:
        # The beat task's body, as celery beat runs it: nothing until the heartbeat is stale, then sent again.
        from core.celery_tasks import jobs_reap_stale_task

        assert jobs_reap_stale_task()["retried"] == []
        retried = wait_for(lambda: jobs_reap_stale_task()["retried"], timeout=30, what="the reaper to see it")
        assert retried == [job_id]
        wait_for(lambda: Job.objects.get(pk=job_id).status in (Job.Status.DONE, Job.Status.FAILED), timeout=240,
                 what="the second worker to finish the redelivered task", log=tmp_path / "agr-second.log")
    finally:
        kill_group(second)

    job = Job.objects.get(pk=job_id)
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2  # the killed delivery and the redelivery
    stored = AgreementRun.objects.get(pk=run.pk)
    assert stored.is_computed
    assert stored.result == reference.result
    assert stored.result["n_items"] == N_ITEMS and stored.result["fleiss_kappa_ci"]["resamples"] == RESAMPLES
    assert job.result["agreement_run"] == run.pk
    assert "agr-second" in (tmp_path / "agr-second.log").read_text()


def test_a_task_that_kills_its_worker_every_time_fails_after_the_attempts(tmp_path: Path, settings) -> None:  # noqa: ANN001
    from core.jobs import job_create, job_enqueue
    from tests.core.doomed_tasks import kill_own_worker_task

    settings.MEDIA_ROOT = str(tmp_path / "media")
    broker_db_emptied()
    worker = start_worker(tmp_path, "doomed")
    try:
        from django.db import transaction

        with transaction.atomic():
            job = job_create(kind="doomed", params={})
            job_enqueue(job=job, task=kill_own_worker_task.name)
        wait_for(lambda: Job.objects.get(pk=job.pk).status == Job.Status.FAILED, timeout=120,
                 what="the job to be failed", log=tmp_path / "doomed.log")
    finally:
        kill_group(worker)
    job.refresh_from_db()
    assert job.attempts == settings.STYLECROWD_JOB_MAX_ATTEMPTS == 3
    assert "stopped 3 times" in job.error and "Traceback" not in job.error
    log = (tmp_path / "doomed.log").read_text()
    # three deliveries killed their worker process; the fourth found no attempt left and failed the job
    assert log.count("Task handler raised error: WorkerLostError") == 3
    assert log.count("] succeeded in") == 1
