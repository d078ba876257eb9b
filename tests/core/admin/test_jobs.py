"""Job pages written for people (core/admin/jobs.py JobAdmin): what the job does and for what, with names and links,
never raw JSON, Celery ids or the server's folders; filters and exports started from the study's dashboard return
there with a message that links the job."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.models import Job
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.celery_tasks.agreement import filter_run_task
from scoring.celery_tasks.export import benchmark_export_task
from scoring.models import BenchmarkExport, FilterRun
from tasks.celery_tasks import corpus_import_task
from tasks.services.uploads import corpus_import_start
from tests.scoring.export.test_services import _validated_study

pytestmark = pytest.mark.django_db
CELERY_ID = "6f1c2d9e-celery-task-id-4b8a"


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return Path(settings.MEDIA_ROOT)


@pytest.fixture
def dashboard():  # noqa: ANN201
    study, _ = _validated_study()
    run = agreement_run_compute(run_id=agreement_run_start(study=study, seed=1, resamples=50, enqueue=False).pk)
    return study, run, reverse("admin:scoring_agreement_dashboard", args=[run.pk])


def _assert_for_people(page: str, job: Job, media: Path) -> None:
    assert CELERY_ID not in page and "celery" not in page.lower()
    assert str(media) not in page and "/tmp/" not in page
    assert '{"' not in page and "{&quot;" not in page and "&#x27;: " not in page  # no raw JSON or dict
    assert 'name="_save"' not in page


def test_an_export_started_from_the_dashboard_returns_there_and_its_job_page_names_and_links(
        admin_client, dashboard, media):
    study, run, dashboard_url = dashboard
    page = admin_client.get(dashboard_url).content.decode()
    start = reverse("admin:scoring_benchmarkexport_start")
    assert f"&amp;next={dashboard_url}\"" in page  # the dashboard's export link says where to come back
    response = admin_client.post(f"{start}?study={study.slug}&status=validated&format=stel-tsv&next="
                                 f"{quote(dashboard_url, safe='')}",
                                 {"format": "stel-tsv", "status": "validated", "study": study.slug})
    job = Job.objects.get(kind="benchmark_export")
    assert response.status_code == 302 and response.url == dashboard_url
    job_url = reverse("admin:core_job_change", args=[job.pk])
    message = [str(m) for m in get_messages(response.wsgi_request)][-1]
    assert message == f'Export queued as <a href="{job_url}">job #{job.pk}</a>.'
    back = admin_client.get(dashboard_url).content.decode()
    assert 'id="pending-jobs"' in back and f'href="{job_url}"' in back and "Benchmark export · job" in back

    Job.objects.filter(pk=job.pk).update(celery_task_id=CELERY_ID, task_name="scoring.benchmark_export")
    benchmark_export_task(job.pk)  # what the worker runs
    job.refresh_from_db()
    export = BenchmarkExport.objects.get(pk=job.result["export"])
    page = admin_client.get(job_url).content.decode()
    _assert_for_people(page, job, media)
    assert export.path not in page and Path(export.path).parent.as_posix() not in page
    assert "Benchmark export · job #" in page  # the title says what the job does
    assert reverse("admin:annotation_study_overview", args=[study.pk]) in page  # the study's overview, by name
    assert reverse("admin:scoring_benchmarkexport_change", args=[export.pk]) in page  # what it made
    assert f">{export}</a>" in page  # by name
    score = reverse("admin:scoring_scorerun_start") + f"?export={export.pk}"
    assert f'href="{score}">Next: score style-similarity methods on this export</a>' in page
    assert "stel-tsv" in page and "the default queue" in page
    assert 'id="pending-jobs"' not in admin_client.get(dashboard_url).content.decode()  # done: listed no more

    # a `next` that leaves the admin is ignored: the job's page, as without one
    elsewhere = admin_client.post(f"{start}?next=https://evil.example/",
                                  {"format": "jsonl", "status": "validated", "study": study.slug})
    assert elsewhere.url == reverse("admin:core_job_change", args=[Job.objects.latest("pk").pk])


def test_a_filter_started_from_the_dashboard_returns_there_with_a_link_to_its_job(admin_client, dashboard, media):
    study, run, dashboard_url = dashboard
    response = admin_client.post(reverse("admin:scoring_agreement_filter", args=[run.pk]),
                                 {"min_correct": 3, "seed": 1, "surplus": "first"})
    job = Job.objects.get(kind="filter_instances")
    assert response.status_code == 302 and response.url == dashboard_url
    job_url = reverse("admin:core_job_change", args=[job.pk])
    assert [str(m) for m in get_messages(response.wsgi_request)][-1] == (
        f'Filter queued as <a href="{job_url}">job #{job.pk}</a>.')
    filter_run_task(job.pk)
    job.refresh_from_db()
    page = admin_client.get(job_url).content.decode()
    _assert_for_people(page, job, media)
    filter_run = FilterRun.objects.get(pk=job.result["filter_run"])
    assert reverse("admin:scoring_filterrun_change", args=[filter_run.pk]) in page
    assert f">{study.slug}</a>" in page or f"({study.slug})</a>" in page
    assert "m (at least m of k correct)" in page
    assert f">{filter_run}</a>" in page  # named, not "filter run #1"
    export_start = reverse("admin:scoring_benchmarkexport_start") + f"?study={study.slug}&amp;status=validated"
    assert f'href="{export_start}">Next: export the validated instances</a>' in page


def test_a_corpus_import_job_page_names_the_uploaded_files_not_the_server_folder(admin_client, media):
    rows = "\n".join(f"hey {i} whatever lol\tHello, this is sentence number {i}." for i in range(6))
    job = corpus_import_start(name="uploaded", component="formality", import_format="aligned", licence="CC-BY-4.0",
                              files=[SimpleUploadedFile("informal.txt", rows.split("\n")[0].encode()),
                                     SimpleUploadedFile("formal.txt", rows.split("\n")[1].encode())],
                              created_by="admin")
    saved = job.params["paths"]
    assert saved and all(path.startswith(str(media)) for path in saved)
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    _assert_for_people(page, job, media)
    assert "informal.txt, formal.txt" in page and "Corpus import · job #" in page
    corpus_import_task(job.pk)
    job.refresh_from_db()
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    _assert_for_people(page, job, media)
    corpus_url = reverse("admin:tasks_corpus_change", args=[job.result["corpus_id"]])
    # what it made, by name (not "corpus #2"), and the next step: generating the corpus's instances
    assert f'corpus <a href="{corpus_url}">uploaded</a>' in page and "corpus #" not in page
    generate = reverse("admin:tasks_corpus_generate", args=[job.result["corpus_id"]])
    assert f'href="{generate}">Next: generate instances for uploaded</a>' in page
    body = admin_client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["made"] == [{"what": "corpus", "name": "uploaded", "url": corpus_url}]
    assert body["next_step"] == {"url": generate, "label": "Next: generate instances for uploaded"}
    step = admin_client.get(generate)  # the step's page: the generation form for this corpus
    assert step.status_code == 200 and b"<b>uploaded</b>" in step.content
