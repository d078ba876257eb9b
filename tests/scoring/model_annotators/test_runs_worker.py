"""Model runs through a real Celery worker on Redis: an endpoint model's run goes to the `default` queue and is
answered by a worker that consumes only `default`; a local model's run goes to `gpu` and waits there for a GPU
worker; the stop button ends a run the worker is in the middle of, keeping the answers in."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from django.db import transaction

from core.models import Job
from scoring.model_annotators.runs import model_run_start, model_run_stop
from scoring.models import ModelAnswer, ModelRun
from tests import factories as f
from tests.scoring.agreement.test_runs_worker import broker_db_emptied, kill_group, start_worker, wait_for
from tests.scoring.fake_openai import FakeOpenAI, oracle

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]


def test_endpoint_run_on_the_default_queue_local_run_waits_on_gpu_and_stop_button(tmp_path: Path, settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    broker_db_emptied()
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3] * 6)
    local_dir = tmp_path / "causal-lm"
    local_dir.mkdir()
    (local_dir / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}))
    (local_dir / "tokenizer.json").write_text("{}")

    def slow(messages, body):
        time.sleep(0.3)
        return oracle(messages, body)

    worker = start_worker(tmp_path, "model-default")
    try:
        with FakeOpenAI(slow) as fake:
            with transaction.atomic():
                run = model_run_start(study=study, backend="openai", base_url=fake.base_url, model="fake-model",
                                      concurrency=1)
                local = model_run_start(study=study, backend="local", model_dir=str(local_dir), any_path=True)
            assert (Job.objects.get(pk=run.job_id).queue, Job.objects.get(pk=local.job_id).queue) == ("default", "gpu")
            # the worker starts answering; the stop button is pressed in the middle of the run
            wait_for(lambda: ModelAnswer.objects.filter(run=run).count() >= 3, timeout=120, what="first answers",
                     log=tmp_path / "model-default.log")
            model_run_stop(run=run)
            wait_for(lambda: ModelRun.objects.get(pk=run.pk).is_computed, timeout=60, what="the stopped run",
                     log=tmp_path / "model-default.log")
        run.refresh_from_db()
        assert run.stopped and 3 <= run.n_answered < run.n_asks == 24
        assert ModelAnswer.objects.filter(run=run).count() == run.n_answered
        assert Job.objects.get(pk=run.job_id).status == Job.Status.DONE
        assert Job.objects.get(pk=run.job_id).result["stopped"] is True
        # nothing consumed the gpu queue: the local model's run is still waiting for a GPU worker
        time.sleep(1)
        assert Job.objects.get(pk=local.job_id).status == Job.Status.CREATED
        assert not ModelAnswer.objects.filter(run=local).exists()
    finally:
        kill_group(worker)
