"""Jobs never wait silently (core/job_waiting.py): only work that loads a model goes to the `gpu` queue, and a job
that no worker has taken says so on its pages within seconds, naming its queue and the command that serves it.
Against the real Redis broker: the messages are in its queues, and the workers are asked which queues they serve."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.urls import reverse

from core.job_waiting import job_waiting
from core.models import Job
from scoring.model_scoring.base import SimilarityMethod
from scoring.model_scoring.runs import score_run_start

pytestmark = pytest.mark.django_db


def contraction(shared_data: Path) -> str:
    return str(shared_data / "stel" / "quad_questions_char_contraction.tsv")


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return Path(settings.MEDIA_ROOT)


@pytest.fixture
def broker(settings):  # noqa: ANN001, ANN201
    assert not settings.CELERY_TASK_ALWAYS_EAGER and settings.CELERY_BROKER_URL.startswith("redis://")
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete("gpu", "default")
    yield client
    client.delete("gpu", "default")


def test_no_task_is_routed_to_gpu_by_its_name():
    # Each start service decides the queue from the job's parameters; a route by name would send lexical work there.
    assert django_settings.CELERY_TASK_ROUTES == {}
    assert set(django_settings.CELERY_QUEUE_NAMES) == {"default", "gpu"}


def test_a_lexical_score_run_goes_to_the_default_queue_and_a_model_run_to_gpu(
        broker, shared_data, media, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        lexical = score_run_start(benchmark_paths=[contraction(shared_data)],
                                  methods="char3gram,punctuation,levenshtein", device="cpu")
    assert broker.llen("default") == 1 and broker.llen("gpu") == 0
    assert Job.objects.get(pk=lexical.job_id).queue == "default" and lexical.job.params["queue"] == "default"
    with django_capture_on_commit_callbacks(execute=True):
        model = score_run_start(benchmark_paths=[contraction(shared_data)], methods="char3gram,st:minilm",
                                device="cpu")
    assert broker.llen("default") == 1 and broker.llen("gpu") == 1
    assert Job.objects.get(pk=model.job_id).queue == "gpu"
    # a user's method class decides by its `needs_model`
    with django_capture_on_commit_callbacks(execute=True):
        custom = score_run_start(benchmark_paths=[contraction(shared_data)],
                                 methods="tests.core.test_job_waiting.LexicalMethod,tests.core.test_job_waiting."
                                         "ModelMethod:x", device="cpu")
    assert broker.llen("gpu") == 2 and Job.objects.get(pk=custom.job_id).queue == "gpu"


@pytest.mark.slow  # waits past the threshold, and asks the (absent) workers for a second
def test_a_job_no_worker_takes_says_so_naming_its_queue_and_the_command(
        broker, shared_data, media, settings, admin_client, api, django_capture_on_commit_callbacks):
    settings.STYLECROWD_JOB_UNCLAIMED_SECONDS = 1
    with django_capture_on_commit_callbacks(execute=True):
        run = score_run_start(benchmark_paths=[contraction(shared_data)], methods="st:minilm", device="cpu")
    assert broker.llen("gpu") == 1  # queued, and no worker consumes the queue
    job = Job.objects.get(pk=run.job_id)
    assert job_waiting(job) is None  # not yet: a worker usually takes a job within the first second
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    assert '<p class="job-waiting errornote" hidden></p>' in page  # the poller fills it in when the time comes

    time.sleep(1.2)
    body = api.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["status"] == "created"
    waiting = body["waiting"]
    assert waiting["queue"] == "gpu" and waiting["workers"] == 0 and waiting["seconds"] >= 1
    assert waiting["command"] == "celery -A config worker -Q gpu"
    assert waiting["one_machine_command"] == "celery -A config worker -Q default,gpu"
    assert "no running worker serves the “gpu” queue" in waiting["text"]
    for url in (reverse("admin:core_job_change", args=[job.pk]),
                reverse("admin:scoring_scorerun_change", args=[run.pk])):
        page = admin_client.get(url).content.decode()
        assert '<p class="job-waiting errornote">No worker has taken this job in' in page, url
        assert "celery -A config worker -Q gpu" in page and "celery -A config worker -Q default,gpu" in page, url
        assert str(shared_data) not in page, url  # the benchmark by its file's name only
    assert "quad_questions_char_contraction.tsv" in page

    # once a worker has taken it, the notice goes
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)
    assert api.get(f"/api/v1/jobs/{job.pk}/").json()["waiting"] is None


def test_the_poller_shows_the_waiting_sentence():
    script = (Path(django_settings.BASE_DIR) / "core" / "static" / "core" / "job_poll.js").read_text()
    assert 'querySelectorAll("p.job-waiting")' in script and "job.waiting.text" in script
    assert "textContent" in script and "innerHTML" not in script


class LexicalMethod(SimilarityMethod):
    """A user's method that loads no model (the default of `needs_model`)."""

    def similarity(self, a, b, *, progress=None):  # noqa: ANN001, ANN201
        return [1.0] * len(a)


class ModelMethod(LexicalMethod):
    """A user's method that says it loads a model."""

    needs_model = True


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_readme_worker_serves_every_queue_a_one_machine_install_needs(broker, shared_data, media, settings):
    """The README's one-machine worker command, run for real: a lexical score run (default queue) and a run of a
    method that says it loads a model (gpu queue) both finish."""
    readme = (Path(settings.BASE_DIR) / "README.md").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if "celery -A config worker" in line and "one machine" in line)
    queues = command.split(" -Q ", 1)[1].split()[0]
    assert set(queues.split(",")) == set(settings.CELERY_QUEUE_NAMES)
    lexical = score_run_start(benchmark_paths=[contraction(shared_data)], methods="char3gram", device="cpu")
    model = score_run_start(benchmark_paths=[contraction(shared_data)],
                            methods="tests.core.test_job_waiting.ModelMethod:x", device="cpu")
    assert (lexical.job.params["queue"], model.job.params["queue"]) == ("default", "gpu")
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL, "STYLECROWD_MEDIA_ROOT": settings.MEDIA_ROOT}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queues, "-P", "solo", "-c", "1",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            statuses = set(Job.objects.filter(pk__in=[lexical.job_id, model.job_id]).values_list("status", flat=True))
            if statuses <= {Job.Status.DONE, Job.Status.FAILED}:
                break
            time.sleep(0.3)
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    for run in (lexical, model):
        job = Job.objects.get(pk=run.job_id)
        assert job.status == Job.Status.DONE, (job.error, output[-2000:])


def _child_exits() -> None:
    return None


def test_asking_the_workers_leaves_no_broker_connection_a_forked_process_would_hang_on(broker, settings):
    """The question goes over its own broker connection, closed after the answer: a connection left in kombu's pool
    in the middle of a BRPOP made every process forked afterwards (multiprocessing runs kombu's after-fork cleanup)
    wait for ever for that BRPOP's reply."""
    import multiprocessing

    from django.core.cache import cache

    from core.job_waiting import workers_serving

    cache.delete("job-waiting:workers:gpu")
    settings.STYLECROWD_JOB_INSPECT_TIMEOUT = 0.5
    assert workers_serving("gpu") == 0  # no worker runs in this test
    from celery import current_app

    with current_app.producer_or_acquire() as producer:  # what queueing a job does next with kombu's pool
        producer.publish({"probe": True}, routing_key="default", exchange="", retry=False)
    broker.delete("default")
    child = multiprocessing.get_context("fork").Process(target=_child_exits)
    child.start()
    child.join(timeout=20)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and child.exitcode == 0
