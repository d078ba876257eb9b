"""Exports from the browser and the API: a form (or POST) that runs as a job and ends in download links; files
streamed by id after a permission check, identical to export_benchmark's output for the same selection."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from core.models import Job
from scoring.celery_tasks.export import benchmark_export_task
from scoring.models import BenchmarkExport, ScoreRun
from tests.factories import AgreementRunFactory, TaskInstanceFactory
from tests.scoring.export.test_services import _validated_study

pytestmark = pytest.mark.django_db


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_admin_export_form_job_and_downloads_equal_the_command(admin_client, tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _validated_study()
    form = admin_client.get(reverse("admin:scoring_benchmarkexport_add"), follow=True)
    assert b'id="export-start"' in form.content
    response = admin_client.post(reverse("admin:scoring_benchmarkexport_start"),
                                 {"format": "stel-tsv", "status": "validated", "study": study.slug})
    job = Job.objects.get(kind="benchmark_export")
    assert response.status_code == 302 and response.url == reverse("admin:core_job_change", args=[job.pk])
    benchmark_export_task(job.pk)  # what the worker runs
    job.refresh_from_db()
    export = BenchmarkExport.objects.get(pk=job.result["export"])
    job_page = admin_client.get(response.url).content.decode()
    assert reverse("admin:scoring_benchmarkexport_change", args=[export.pk]) in job_page  # what the job made
    page = admin_client.get(reverse("admin:scoring_benchmarkexport_change", args=[export.pk])).content.decode()
    data_url = reverse("admin:scoring_benchmarkexport_download", args=[export.pk, "data"])
    assert data_url in page and export.path not in page  # by id, never by server path
    downloaded = _body(admin_client.get(data_url))

    out = tmp_path / "cli.tsv"
    call_command("export_benchmark", "--format", "stel-tsv", "--status", "validated", "--study", study.slug,
                 "--out", str(out), stdout=io.StringIO())
    assert downloaded == out.read_bytes()
    card = _body(admin_client.get(reverse("admin:scoring_benchmarkexport_download", args=[export.pk, "card-md"])))
    assert b"Licences and attribution" in card
    run = AgreementRunFactory(study=study)
    dashboard = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk]))
    assert reverse("admin:scoring_benchmarkexport_start").encode() in dashboard.content
    assert b"manage.py export_benchmark" not in dashboard.content


def test_export_form_refuses_an_empty_selection_without_a_job(admin_client):
    TaskInstanceFactory()
    response = admin_client.post(reverse("admin:scoring_benchmarkexport_start"),
                                 {"format": "jsonl", "status": "validated"})
    assert response.status_code == 200 and b"nothing to export" in response.content
    assert not Job.objects.exists()


def test_api_export_and_download(tmp_path, settings, api):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _validated_study()
    started = api.post("/api/v1/exports/", {"format": "jsonl", "status": "validated", "study": study.slug},
                       format="json")
    assert started.status_code == 202, started.content
    benchmark_export_task(started.json()["job"]["id"])
    export_id = Job.objects.get(pk=started.json()["job"]["id"]).result["export"]
    detail = api.get(f"/api/v1/exports/{export_id}/").json()
    assert detail["rows"] == 3 and set(detail["downloads"]) == {"data", "card", "card-md", "croissant"}
    data = api.get(detail["downloads"]["data"])
    assert data.status_code == 200 and _body(data) == Path(BenchmarkExport.objects.get().path).read_bytes()
    assert api.post("/api/v1/exports/", {"status": "candidate", "study": study.slug},
                    format="json").status_code == 400
    # a researcher without the view permission on exports gets nothing
    other = User.objects.create_user("viewer", password="pw", is_staff=True)
    other.user_permissions.add(Permission.objects.get(codename="view_study"))
    api.force_authenticate(other)
    assert api.get(detail["downloads"]["data"]).status_code == 403


def test_score_run_predictions_download(admin_client, tmp_path):
    predictions = tmp_path / "preds.tsv"
    predictions.write_text("ID\tmethod\tprediction\nQQ_1\tchar3gram\t1\n")
    run = ScoreRun.objects.create(benchmark_paths=[], methods=["char3gram"], predictions_path=str(predictions))
    page = admin_client.get(reverse("admin:scoring_scorerun_change", args=[run.pk])).content.decode()
    url = reverse("admin:scoring_scorerun_predictions", args=[run.pk])
    assert url in page
    assert _body(admin_client.get(url)) == predictions.read_bytes()
    pending = ScoreRun.objects.create(benchmark_paths=[], methods=["char3gram"])
    assert admin_client.get(reverse("admin:scoring_scorerun_predictions", args=[pending.pk])).status_code == 409
