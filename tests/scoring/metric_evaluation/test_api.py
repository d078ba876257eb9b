"""The admin and API doors of the metric meta-evaluation, and a real Celery worker on the `gpu` queue."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.urls import reverse

from core.models import Job
from scoring.celery_tasks.metric_evaluation import metric_evaluation_execute_task
from scoring.models import MetricEvaluation
from tests.scoring.metric_evaluation.test_services import _turk_study


@pytest.mark.slow  # about a second: out of `make test-fast`
@pytest.mark.django_db
def test_admin_start_form_queues_and_change_page_shows_table_and_plot(shared_data, admin_client,
                                                                      django_capture_on_commit_callbacks):
    study, items, _ = _turk_study(shared_data, n=12)
    start = reverse("admin:scoring_metricevaluation_start")
    page = admin_client.get(start)
    assert page.status_code == 200 and b"nli_mutual" in page.content and b"logprob" in page.content

    # A question the study does not have: the service's message on the form, nothing stored.
    bad = admin_client.post(start, {"study": study.slug, "question": "meaning", "metrics": ["chrf"],
                                    "device": "auto"})
    assert bad.status_code == 200 and b"has no question" in bad.content
    assert not MetricEvaluation.objects.exists() and not Job.objects.exists()

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(start, {"study": study.slug, "question": "content", "by_style": "on",
                                             "metrics": ["levenshtein", "chrf"], "device": "auto"})
    assert response.status_code == 302 and len(callbacks) == 1
    evaluation = MetricEvaluation.objects.get()
    assert response["Location"] == reverse("admin:scoring_metricevaluation_change", args=[evaluation.pk])
    running = admin_client.get(response["Location"])
    assert b'class="job-progress"' in running.content and b"metric-results" not in running.content

    metric_evaluation_execute_task(evaluation.job_id, evaluation.pk)  # what the worker runs
    done = admin_client.get(response["Location"]).content.decode()
    assert 'class="metric-results"' in done and "levenshtein_src" in done and "chrf_ref" in done
    assert "<b>1.000</b>" in done  # levenshtein_src, the metric the ratings were built from
    assert "picks best" in done and "data:image/png;base64," not in done  # a file, drawn once, not inlined
    plot_url = reverse("metric-evaluation-plot", args=[evaluation.pk])
    assert plot_url in done and "metric columns" in done
    first = admin_client.get(plot_url)
    assert first.status_code == 200 and first.content.startswith(b"\x89PNG")
    assert admin_client.get(plot_url).content == first.content
    assert "no-store" not in first["Cache-Control"] and first["ETag"]
    assert admin_client.get(plot_url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304  # revalidated, no body
    assert admin_client.get(reverse("admin:scoring_metricevaluation_changelist")).status_code == 200


@pytest.mark.slow  # about a second: out of `make test-fast`
@pytest.mark.django_db
def test_api_start_detail_and_plot(shared_data, api, django_capture_on_commit_callbacks):
    _turk_study(shared_data, n=10)
    url = "/api/v1/metric-evaluations/"
    unknown = api.post(url, {"study": "turk-likert", "question": "content", "metrics": ["bleurt"]}, format="json")
    assert unknown.status_code == 400 and "unknown metric(s) bleurt" in unknown.json()["error"]["message"]
    missing = api.post(url, {"study": "nope", "question": "content", "metrics": ["bleu"]}, format="json")
    assert missing.status_code == 404
    assert not MetricEvaluation.objects.exists()

    with django_capture_on_commit_callbacks(execute=False):
        started = api.post(url, {"study": "turk-likert", "question": "content", "metrics": ["jaro_winkler", "bleu"],
                                 "by": "style"}, format="json")
    assert started.status_code == 202, started.content
    body = started.json()
    assert body["computed"] is False and body["job"]["status"] == "created"
    assert api.get(f"{url}{body['evaluation']}/plot.png").status_code == 409
    metric_evaluation_execute_task(body["job"]["id"], body["evaluation"])
    detail = api.get(f"{url}{body['evaluation']}/").json()
    assert detail["computed"] is True and detail["job"]["status"] == "done"
    assert set(detail["correlations"]) == {"jaro_winkler_src", "jaro_winkler_ref", "bleu_src", "bleu_ref"}
    assert set(detail["correlations"]["bleu_src"]["by_style"]) == {"plain", "simple"}
    assert len(detail["results"]["items"]) == 10
    plot = api.get(f"{url}{body['evaluation']}/plot.png")
    assert plot.status_code == 200 and plot["Content-Type"] == "image/png" and plot.content[:4] == b"\x89PNG"
    listed = api.get(url).json()
    assert "logprob" in listed["metrics"] and [e["evaluation"] for e in listed["evaluations"]] == [body["evaluation"]]


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_real_worker_on_the_gpu_queue_runs_a_model_metric(shared_data, settings):
    """embedding_cosine is a model metric: it must go to `gpu`, and a worker listening only there must run it."""
    import redis

    from scoring.metric_evaluation.services import metric_evaluation_start

    _turk_study(shared_data, n=8, slug="worker-likert")
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete("gpu", "default")
    evaluation = metric_evaluation_start(study_slug="worker-likert", question="content",
                                         metric_names=["embedding_cosine"], options={"device": "cpu"})
    assert broker.llen("gpu") == 1
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
           "CELERY_BROKER_URL": settings.CELERY_BROKER_URL}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu", "-P", "solo", "-c", "1",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            evaluation.refresh_from_db()
            if evaluation.is_computed or Job.objects.get(pk=evaluation.job_id).status == Job.Status.FAILED:
                break
            time.sleep(0.5)
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    job = Job.objects.get(pk=evaluation.job_id)
    assert job.status == Job.Status.DONE, (job.error, output[-2000:])
    # Progress was written outside the work's transaction, so it is visible here.
    assert job.progress_total == 8 and job.progress_done == 8
    assert evaluation.results["columns"]["embedding_cosine_src"]["overall"]["n"] == 8
    assert all(-1 <= row["scores"]["embedding_cosine_src"] <= 1 + 1e-6 for row in evaluation.results["items"])


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["admin:scoring_metricevaluation_start", "admin:scoring_scorerun_start"])
def test_start_forms_need_the_add_permission(client, django_user_model, name):
    """Staff who may only look at computation records cannot start one (both forms share one start view)."""
    from django.contrib.auth.models import Permission

    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer-1", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_metricevaluation", "view_scorerun"]))
    client.force_login(viewer)
    assert client.get(reverse(name)).status_code == 403
    assert client.post(reverse(name), {}).status_code == 403
    assert not MetricEvaluation.objects.exists() and not Job.objects.exists()
