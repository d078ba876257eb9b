"""The model-similarity signal run by a real Celery worker process on Redis: the API queues the job with the endpoint
and the name of the key's variable; the worker, whose environment alone holds the key, reads it when it asks the
fake OpenAI-compatible endpoint (over real HTTP); the key is in no row and in nothing the worker logged."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import WritingSignal
from core.models import Job
from tests.annotation.services.writing_signals.test_model_rewrite import (
    SECRET,
    crowd_and_model,
    rewrite_of,
    superuser_api,
)
from tests.scoring.agreement.test_runs_worker import broker_db_emptied, kill_group, start_worker, wait_for
from tests.scoring.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]


def test_the_worker_reads_the_key_from_its_own_environment(tmp_path: Path, settings, monkeypatch) -> None:  # noqa: ANN001
    settings.MEDIA_ROOT = str(tmp_path / "media")
    broker_db_emptied()
    ids = crowd_and_model()
    with FakeOpenAI(rewrite_of, wrap=False) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        worker = start_worker(tmp_path, "signals-endpoint")
        monkeypatch.delenv("OPENAI_API_KEY")  # the door's process has no key: only the worker's environment does
        try:
            response = superuser_api().post("/api/v1/studies/sig/writing-signals/", {
                "rewrite_model_url": fake.base_url, "rewrite_model": "fake-model"}, format="json")
            assert response.status_code == 202, response.content
            job_id = response.json()["job"]["id"]
            job = wait_for(lambda: (lambda j: j if j.status in (Job.Status.DONE, Job.Status.FAILED) else None)(
                Job.objects.get(pk=job_id)), timeout=120, what="the writing-signals job",
                log=tmp_path / "signals-endpoint.log")
        finally:
            kill_group(worker)
        assert job.status == Job.Status.DONE, job.error
        assert [r["authorization"] for r in fake.requests if r["path"].endswith("/chat/completions")] == \
            [f"Bearer {SECRET}"] * 2  # one request per source, with the worker's key
    assert job.result["flagged"]["model_similarity"] == 1
    assert WritingSignal.objects.get(response_id=ids["paster"][0], signal="model_similarity").flagged
    assert job.params["rewrite_model"] == {"rewrite_model_url": fake.base_url, "rewrite_model": "fake-model",
                                           "api_key_env": "OPENAI_API_KEY"}
    assert SECRET not in str(Job.objects.filter(pk=job_id).values().get())
    log = (tmp_path / "signals-endpoint.log").read_text()
    assert "annotation.writing_signals" in log and SECRET not in log
