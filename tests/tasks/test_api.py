"""The admin and the REST API reach the same import and generation services as the CLI."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from core.models import Job
from tasks.celery_tasks import corpus_import_task, instances_generate_task
from tasks.models import Corpus, TaskInstance

pytestmark = pytest.mark.django_db


def nsubs_uploads(shared_data: Path) -> dict[str, SimpleUploadedFile]:
    return {
        "style_1_file": SimpleUploadedFile("plain.txt",
                                           (shared_data / "stel" / "nsubs_translated_sentences.txt").read_bytes()),
        "style_2_file": SimpleUploadedFile("subst.txt", (shared_data / "stel" / "nsubs_sentences.txt").read_bytes()),
    }


def test_api_upload_queues_a_job_that_imports(api: APIClient, shared_data: Path) -> None:
    response = api.post("/api/v1/corpora/", {"name": "nsubs", "component": "nbr_substitution", "format": "aligned",
                                             **nsubs_uploads(shared_data)}, format="multipart")
    assert response.status_code == 202, response.content
    job_id = response.json()["job"]["id"]
    assert response.json()["job"]["status"] == "created" and not Corpus.objects.exists()
    corpus_import_task(job_id)  # what the worker runs
    job = Job.objects.get(pk=job_id)
    assert job.status == "done" and job.result["pairs"] == 100 and job.percent == 100.0
    assert Corpus.objects.get(name="nsubs").n_pairs == 100
    assert api.get(f"/api/v1/jobs/{job_id}/").json()["status"] == "done"
    corpora = api.get("/api/v1/corpora/").json()
    assert [c["name"] for c in corpora] == ["nsubs"] and corpora[0]["component"] == "nbr_substitution"
    # generation through the API
    corpus_id = corpora[0]["id"]
    response = api.post(f"/api/v1/corpora/{corpus_id}/generate/", {"setup": "triple", "seed": 3}, format="json")
    assert response.status_code == 202
    instances_generate_task(response.json()["job"]["id"])
    assert TaskInstance.objects.filter(corpus_id=corpus_id, setup="triple").count() == 100
    listed = api.get("/api/v1/instances/", {"corpus": "nsubs", "setup": "triple", "limit": 5}).json()
    assert listed["count"] == 100 and len(listed["results"]) == 5


def test_api_upload_reads_null_text_of_a_nullable_field_as_null(api: APIClient, shared_data: Path) -> None:
    """A multipart body cannot say null but as text: `null` for min_edit_distance (documented nullable) is null, as
    `detokenize` reads it; once a 400 'A valid integer is required' (schemathesis found it). Other text is still
    refused, naming the field."""
    response = api.post("/api/v1/corpora/", {"name": "nsubs", "component": "nbr_substitution", "format": "aligned",
                                             "min_edit_distance": "null", "detokenize": "null",
                                             **nsubs_uploads(shared_data)}, format="multipart")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.params["min_edit_distance"] is None and job.params["detokenize"] is None, job.params
    text = api.post("/api/v1/corpora/", {"name": "x", "component": "formality", "format": "aligned",
                                         "min_edit_distance": "none", **nsubs_uploads(shared_data)},
                    format="multipart")
    assert text.status_code == 400 and "min_edit_distance" in text.json()["error"]["details"], text.content


def test_api_failed_import_reports_the_uploaded_file_name_and_line(api: APIClient) -> None:
    files = {"style_1_file": SimpleUploadedFile("informal.txt", b"hey\nsup\n"),
             "style_2_file": SimpleUploadedFile("formal.txt", b"Hello.\n\n")}
    response = api.post("/api/v1/corpora/", {"name": "x", "component": "formality", "format": "aligned",
                                             **files}, format="multipart")
    assert response.status_code == 202
    with pytest.raises(Exception):  # noqa: B017 - the task re-raises; the job row keeps the message
        corpus_import_task(response.json()["job"]["id"])
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status == "failed" and job.error == "formal.txt, line 2: empty text"
    assert not Corpus.objects.exists()


@pytest.mark.parametrize(
    ("payload", "status", "fragment"),
    [
        ({"name": "x", "component": "formality", "format": "gyafc"}, 400, "format"),
        ({"name": "x", "component": "sarcasm", "format": "aligned"}, 400, "unknown style component 'sarcasm'"),
        ({"name": "x", "format": "aligned"}, 400, "component: required"),
    ],
)
def test_api_rejects_bad_uploads_with_json_errors(api: APIClient, payload: dict, status: int, fragment: str) -> None:
    files = {"style_1_file": SimpleUploadedFile("a.txt", b"hey\n"),
             "style_2_file": SimpleUploadedFile("b.txt", b"Hi.\n")}
    response = api.post("/api/v1/corpora/", {**payload, **files}, format="multipart")
    assert response.status_code == status
    assert fragment in response.json()["error"]["message"]
    assert not Job.objects.exists()


def test_api_requires_a_researcher(shared_data: Path) -> None:
    assert APIClient().get("/api/v1/corpora/").status_code in (401, 403)
    assert "error" in APIClient().get("/api/v1/corpora/").json()


def test_admin_upload_and_generate_action(admin_user, shared_data: Path) -> None:
    client = Client()
    client.force_login(admin_user)
    page = client.get("/admin/tasks/corpus/import/")
    assert page.status_code == 200 and b"Import a corpus" in page.content
    response = client.post("/admin/tasks/corpus/import/", {
        "name": "nsubs", "component": "nbr_substitution", "import_format": "aligned", "seed": 0,
        "min_edit_distance": "", **nsubs_uploads(shared_data),
    })
    assert response.status_code == 302
    job = Job.objects.get(kind="corpus_import")
    corpus_import_task(job.pk)
    corpus = Corpus.objects.get(name="nsubs")
    assert client.get(f"/admin/core/job/{job.pk}/change/").status_code == 200
    listing = client.get("/admin/tasks/corpus/")
    assert b"browse 100 pairs" in listing.content
    form = client.post("/admin/tasks/corpus/", {"action": "generate_instances", "_selected_action": [corpus.pk]})
    assert form.status_code == 200 and b"Generate instances" in form.content
    client.post("/admin/tasks/corpus/", {"action": "generate_instances", "_selected_action": [corpus.pk],
                                         "apply": "1", "setup": "quadruple", "seed": 2, "count": ""})
    instances_generate_task(Job.objects.get(kind="instances_generate").pk)
    assert TaskInstance.objects.filter(corpus=corpus, setup="quadruple").count() == 100
    filtered = client.get("/admin/tasks/taskinstance/", {"setup": "quadruple", "component__id__exact":
                                                         corpus.component_id})
    assert filtered.status_code == 200 and b"100 task instances" in filtered.content
    assert client.get("/admin/tasks/parallelpair/", {"q": "4ever"}).status_code == 200


def test_openapi_schema_lists_the_tasks_endpoints(api: APIClient) -> None:
    schema = api.get("/api/schema/", {"format": "json"}).json()
    assert "/api/v1/corpora/" in schema["paths"] and "/api/v1/corpora/{id}/generate/" in schema["paths"]


def _aligned_bytes(n: int, width: int) -> tuple[bytes, bytes]:
    informal = "".join(f"hey u gonna come over {i} {'x' * width}\n" for i in range(n)).encode()
    formal = "".join(f"Would you like to come over {i}? {'y' * width}\n" for i in range(n)).encode()
    return informal, formal


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_api_upload_above_five_megabytes_streams_and_imports(api: APIClient, settings, tmp_path) -> None:
    """Above FILE_UPLOAD_MAX_MEMORY_SIZE the files are temporary files on disk: the view must not copy them (this
    was `TypeError: cannot pickle '_io.BufferedRandom'`)."""
    settings.MEDIA_ROOT = str(tmp_path)
    informal, formal = _aligned_bytes(30_000, 150)
    assert len(informal) > 5 * 1024 * 1024
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    first, second = io.BytesIO(informal), io.BytesIO(formal)
    first.name, second.name = "informal.txt", "formal.txt"
    response = client.post("/api/v1/corpora/", {"name": "big", "component": "formality", "format": "aligned",
                                                "style_1_file": first, "style_2_file": second})
    assert response.status_code == 202, response.content[:500]
    corpus_import_task(response.json()["job"]["id"])
    assert Corpus.objects.get(name="big").n_pairs == 30_000


def test_api_upload_over_the_limit_is_refused_with_413(api: APIClient, settings) -> None:
    settings.STYLECROWD_UPLOAD_MAX_MB = 1
    informal, formal = _aligned_bytes(6_000, 150)
    response = api.post("/api/v1/corpora/", {
        "name": "big", "component": "formality", "format": "aligned",
        "style_1_file": SimpleUploadedFile("a.txt", informal), "style_2_file": SimpleUploadedFile("b.txt", formal),
    }, format="multipart")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "upload_too_large" and "at most 1 MB" in error["message"]
    assert not Job.objects.exists()


def test_aligned_files_are_named_by_role_not_by_order(admin_user, tmp_path, settings) -> None:
    """Posting style 2 first changes nothing: the fields say which file is which."""
    settings.MEDIA_ROOT = str(tmp_path)
    client = Client()
    client.force_login(admin_user)
    response = client.post("/admin/tasks/corpus/import/", {
        "name": "roles", "component": "formality", "import_format": "aligned", "seed": 0, "min_edit_distance": 4,
        "style_2_file": SimpleUploadedFile("formal.txt", b"Would you like to come?\n"),
        "style_1_file": SimpleUploadedFile("informal.txt", b"u wanna come\n"),
    })
    assert response.status_code == 302
    corpus_import_task(Job.objects.get(kind="corpus_import").pk)
    pair = Corpus.objects.get(name="roles").pairs.get()
    assert (pair.text_1, pair.text_2) == ("u wanna come", "Would you like to come?")


def test_admin_import_form_errors_once_and_in_plain_words(admin_user) -> None:
    client = Client()
    client.force_login(admin_user)
    response = client.post("/admin/tasks/corpus/import/", {
        "name": "x", "component": "formality", "import_format": "aligned", "seed": 0, "min_edit_distance": 4,
        "files": [SimpleUploadedFile("a.txt", b"a\n"), SimpleUploadedFile("b.txt", b"b\n")],
    })
    page = response.content.decode()
    assert response.status_code == 200 and page.count("upload the style-1 file and the style-2 file") == 1
    assert "--" not in page.split("<form")[1].split("</form>")[0].replace("<!--", "").replace("-->", "")
    assert not Job.objects.exists()
    form_page = client.get("/admin/tasks/corpus/import/").content.decode()
    assert 'min_edit_distance: ["aligned", "turkcorpus", "pairs"]' in form_page  # only the formats it applies to


def test_generation_is_refused_before_a_job_when_instances_exist(admin_user, api: APIClient) -> None:
    from tests.factories import CorpusFactory, ParallelPairFactory, TaskInstanceFactory

    corpus = CorpusFactory(name="c")
    for _ in range(3):
        ParallelPairFactory(corpus=corpus)
    TaskInstanceFactory(corpus=corpus, setup="triple")
    response = api.post(f"/api/v1/corpora/{corpus.pk}/generate/", {"setup": "triple"}, format="json")
    assert response.status_code == 409 and "tick Replace" in response.json()["error"]["message"]
    too_many = api.post(f"/api/v1/corpora/{corpus.pk}/generate/", {"setup": "quadruple", "count": 9}, format="json")
    assert too_many.status_code == 400 and "between 1 and the corpus's 3 pairs" in too_many.json()["error"]["message"]
    client = Client()
    client.force_login(admin_user)
    page = client.post("/admin/tasks/corpus/", {"action": "generate_instances", "_selected_action": [corpus.pk],
                                                "apply": "1", "setup": "triple", "seed": 0}, follow=True)
    assert "has triple instances already" in page.content.decode() and "--replace" not in page.content.decode()
    assert not Job.objects.exists()
