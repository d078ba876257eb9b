"""Rewrite studies through the researcher API: POST /api/v1/studies/ with kind `rewrite` calls
the same service as `create_study --kind rewrite`, refuses bad input with the field named and stores nothing."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.models import RewriteSettings, Study
from tests import factories as f

pytestmark = pytest.mark.django_db

SOURCES = [
    {"id": "a", "text": "lol i dunno what ur talking about tbh man"},
    {"id": "b", "text": "that movie was sooo boring, i fell asleep like twice"},
    {"id": "c", "text": "we saw the finale last nite and it was great"},
    {"id": "d", "text": "omg did u see the finale last nite??"},          # question: dropped
    {"id": "e", "text": "check this out www.example.com its so funny"},  # URL: dropped
    {"id": "f", "text": "too short"},                                      # fewer than 5 words: dropped
]


def researcher() -> APIClient:
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="pw"))
    return api


def body(slug: str, **rewrite) -> dict:
    return {"slug": slug, "kind": "rewrite", "annotators_per_item": 2, "items_per_batch": 4,
            "eligibility_questions": [],
            "rewrite": {"sources": SOURCES, "target_style": "formal", "max_length": 200, "copy_threshold": 85,
                        "persona": ["age"], "qualify_min_accepted": 3, "qualify_min_rate": 0.9, **rewrite}}


def test_api_creates_the_same_rewrite_study_as_the_command(tmp_path: Path) -> None:
    api = researcher()
    response = api.post("/api/v1/studies/", body("api-rw"), format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["status"] == "draft" and data["items"] == 3
    assert data["sources"]["dropped"] == {"empty": 0, "duplicate": 0, "question": 1, "url": 1, "too_short": 1,
                                          "too_long": 0}
    study = Study.objects.get(slug="api-rw")
    assert study.item_kind == "rewrite" and study.annotators_per_item == 2
    assert [q["name"] for q in study.eligibility_questions] == ["age"]
    rules = RewriteSettings.objects.get(study=study)
    assert (rules.target_style, rules.copy_threshold, rules.max_length) == ("formal", 85, 200)
    assert (rules.qualification_min_accepted, rules.qualification_min_rate) == (3, 0.9)

    sources = tmp_path / "sources.jsonl"
    sources.write_text("\n".join(json.dumps(s) for s in SOURCES))
    call_command("create_study", "--slug", "cli-rw", "--kind", "rewrite", "--sources", str(sources),
                 "--target-style", "formal", "--rewrite-max-length", "200", "--copy-threshold", "85",
                 "--persona", "age", "--qualify-min-accepted", "3", "--qualify-min-rate", "0.9",
                 "--annotators-per-item", "2", "--items-per-batch", "4", "--eligibility", "none",
                 stdout=io.StringIO(), stderr=io.StringIO())
    cli = Study.objects.get(slug="cli-rw")

    def shape(s: Study) -> list:
        return sorted((i.external_id, json.dumps(i.payload, sort_keys=True)) for i in s.items.all())
    assert shape(study) == shape(cli)
    assert study.task_description == cli.task_description and "Examples:" in study.task_description
    assert study.eligibility_questions == cli.eligibility_questions
    other = RewriteSettings.objects.get(study=cli)
    assert (other.filters, other.examples) == (rules.filters, rules.examples)


def test_api_rewrite_study_from_a_corpus_side_and_opened() -> None:
    corpus = f.CorpusFactory(name="informal-formal")
    for n in range(4):
        f.ParallelPairFactory(corpus=corpus, text_1=f"gonna tell u the story number {n} real quick now",
                              text_2=f"I shall tell you story number {n} briefly.")
    response = researcher().post("/api/v1/studies/", {
        **body("side-rw"), "open": True,
        "rewrite": {"sources_corpus": "informal-formal", "side": 1, "target_style": "formal"}}, format="json")
    assert response.status_code == 201, response.content
    study = Study.objects.get(slug="side-rw")
    assert study.status == Study.Status.ACTIVE and study.items.count() == 4
    assert all(i.payload["source"].startswith("gonna tell u") for i in study.items.all())


@pytest.mark.parametrize(("change", "status", "field"), [
    ({"sources": None}, 400, "sources"),
    ({"sources": [None, None]}, 400, "sources"),  # a null source: once a 500 (schemathesis found it)
    ({"sources": SOURCES + [{"id": "a", "text": "a repeated id with enough words here"}]}, 400, "sources"),
    ({"copy_threshold": 150}, 400, "copy_threshold"),
    ({"min_length": 300, "max_length": 200}, 400, "rewrite_min_length"),
    ({"persona": ["shoe size"]}, 400, "persona"),
    ({"sources": None, "sources_corpus": "nope", "side": 1}, 404, "sources_corpus"),
    ({"sources": None, "sources_corpus": "nope"}, 400, "side"),
    ({"sources": None, "sources_corpus": "nope", "side": 3}, 400, "side"),  # the schema states 1-2 too
    ({"examples": [{"source": "only a source"}]}, 400, "examples"),
    ({"sources": [{"id": "q", "text": "is this a question?"}]}, 400, None),
])
def test_bad_rewrite_requests_are_refused_and_nothing_is_stored(change: dict, status: int, field: str | None) -> None:
    response = researcher().post("/api/v1/studies/", body("bad-rw", **change), format="json")
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["message"]
    if field:
        assert field in json.dumps(error), error
    assert not Study.objects.filter(slug="bad-rw").exists() and not RewriteSettings.objects.exists()


def test_rewrite_kind_needs_its_part_and_a_researcher() -> None:
    api = researcher()
    missing = api.post("/api/v1/studies/", {"slug": "x", "kind": "rewrite"}, format="json")
    assert missing.status_code == 400 and "rewrite" in json.dumps(missing.json()["error"])
    no_setup = api.post("/api/v1/studies/", {"slug": "y"}, format="json")
    assert no_setup.status_code == 400 and "setup" in json.dumps(no_setup.json()["error"])
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_study"))
    api = APIClient()
    api.force_authenticate(viewer)
    refused = api.post("/api/v1/studies/", body("viewer-rw"), format="json")
    assert refused.status_code == 403 and not Study.objects.filter(slug="viewer-rw").exists()


def test_admin_create_form_makes_a_rewrite_study_as_the_api(admin_client) -> None:  # noqa: ANN001
    form = {"slug": "admin-rw", "kind": "rewrite", "annotators_per_item": 2, "items_per_batch": 4, "max_batches": 2,
            "instance_status": "candidate", "seed": 0, "screening_per_batch": 2,  # the page's initial values
            "time_limit_minutes": 20, "estimated_minutes": 5, "target_hourly_pay": "9.00",
            "sources": "\n".join(f"{s['id']}\t{s['text']}" for s in SOURCES), "target_style": "formal",
            "rewrite_max_length": 200, "copy_threshold": 85, "persona": "age", "filter_questions": "on",
            "filter_urls": "on", "min_words": 5, "max_words": 25, "qualify_min_accepted": 3, "qualify_min_rate": 0.9}
    response = admin_client.post("/admin/annotation/study/create/", form)
    study = Study.objects.get(slug="admin-rw")
    assert response.status_code == 302 and response.url.endswith(f"/{study.pk}/preview/")
    assert study.status == Study.Status.DRAFT and study.item_kind == "rewrite"
    assert sorted(study.items.values_list("external_id", flat=True)) == ["a", "b", "c"]
    rules = RewriteSettings.objects.get(study=study)
    assert (rules.target_style, rules.copy_threshold, rules.max_length) == ("formal", 85, 200)
    assert (rules.qualification_min_accepted, rules.qualification_min_rate) == (3, 0.9)
    assert rules.filters["dropped"] == {"empty": 0, "duplicate": 0, "question": 1, "url": 1, "too_short": 1,
                                        "too_long": 0}
    assert [q["name"] for q in study.eligibility_questions] == ["age"]
    preview = admin_client.get(response.url.replace("/preview/", "/preview/prolific/"))
    assert preview.status_code == 200 and "that movie was sooo boring" in preview.content.decode()

    for change, message in (({"sources": ""}, "Give the sources"),
                            ({"slug": "bad-rw", "persona": "shoe size"}, "unknown attribute"),
                            ({"slug": "bad-rw", "sources": "a\tone two three four five\na\tsix seven eight nine ten"},
                             "repeated ids"),
                            ({"slug": "bad-rw", "kind": "ordering"}, "needs a setup")):
        page = admin_client.post("/admin/annotation/study/create/", {**form, **change})
        assert page.status_code == 200 and message in page.content.decode(), change
    assert not Study.objects.filter(slug="bad-rw").exists() and RewriteSettings.objects.count() == 1
