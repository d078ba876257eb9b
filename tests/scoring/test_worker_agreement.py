"""A real Celery worker on Redis is killed (SIGKILL) in the middle of an agreement task; a second worker picks the
redelivered message up (acks_late) and stores exactly the result an uninterrupted run stores."""
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
from scoring.models import AgreementRun
from scoring.stats.runs import agreement_run_create, agreement_run_execute
from tasks.models import Order, Setup, TaskInstance
from tests.factories import CorpusFactory, StudyFactory, component

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]

REPO = Path(settings.BASE_DIR)
N_ITEMS = 2000
K = 5
RESAMPLES = 1000  # enough bootstrap work that the task runs for several seconds: room to kill it mid-way

WORKER_SETTINGS = '''
from config.settings.test import *  # noqa: F401,F403

# Redeliver an unacknowledged message a few seconds after its worker died (production keeps an hour).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3, "unacked_restore_interval": 1,
                                   "unacked_restore_throttle": 1}
'''


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
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()  # our own db: no stale messages from earlier runs
    study_id = build_study()
    from annotation.models import Study

    study = Study.objects.get(pk=study_id)

    # The reference: the same run computed in-process, never interrupted.
    reference = agreement_run_execute(
        run_id=agreement_run_create(study=study, seed=5, resamples=RESAMPLES, enqueue=False).pk)

    first = start_worker(tmp_path, "agr-first")
    try:
        run = agreement_run_create(study=study, seed=5, resamples=RESAMPLES, enqueue=True)
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
