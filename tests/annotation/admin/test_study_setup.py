"""Creating a study in the admin and through the API, as create_study does: a draft with items, a preview as the
participant sees it, the platform links, and opening it (only with items)."""
from __future__ import annotations

import html
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Study
from tests import factories as f
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@pytest.fixture
def corpus():
    corpus = f.CorpusFactory(name="turk-sample")
    for _ in range(12):
        f.TaskInstanceFactory(corpus=corpus)
    return corpus


def _form(**extra) -> dict:
    return {"slug": "web", "title": "", "setup": "quadruple", "corpora": ["turk-sample"],
            "instance_status": "candidate", "count": 5, "seed": 3, "annotators_per_item": 5, "min_correct": 3,
            "items_per_batch": 4,
            "screening_per_batch": 0, "max_batches": 2, "time_limit_minutes": 20, "completion_code": "C0DE",
            "redirect_url": "https://app.prolific.com/submissions/complete?cc=C0DE", "estimated_minutes": 5,
            "target_hourly_pay": "9.50", **extra}


def test_admin_creates_the_draft_create_study_would(admin_client, corpus):
    page = admin_client.get(reverse("admin:annotation_study_add"))
    assert page.status_code == 302 and page.url == reverse("admin:annotation_study_create")
    response = admin_client.post(reverse("admin:annotation_study_create"), _form())
    study = Study.objects.get(slug="web")
    assert response.status_code == 302 and response.url == reverse("admin:annotation_study_preview", args=[study.pk])
    assert study.status == Study.Status.DRAFT and study.items.count() == 5
    assert (study.annotators_per_item, study.min_correct, study.items_per_batch, study.batch_time_limit_minutes) == (
        5, 3, 4, 20)
    call_command("create_study", "--slug", "cli", "--setup", "quadruple", "--corpus", "turk-sample", "--count", "5",
                 "--seed", "3", "--screening-per-batch", "0", stdout=io.StringIO())
    same = Study.objects.get(slug="cli")
    assert list(study.items.values_list("instance_id", flat=True)) == list(
        same.items.values_list("instance_id", flat=True))

    preview = html.unescape(admin_client.get(response.url).content.decode())
    assert f"http://testserver/s/web/{PROLIFIC}" in preview and 'id="link-mturk" value="http://testserver/s/web/"' \
        in preview
    # The participant's page in preview mode carries the first items as the participant API serves them.
    participant = admin_client.get(reverse("admin:annotation_study_participant_preview", args=[study.pk, "prolific"]))
    first = study.items.order_by("position").first().instance
    items = participant.context["config"]["preview"]["items"]
    assert participant.status_code == 200 and items[0]["choices"] == ["S1-S2", "S2-S1"]
    assert first.anchor_1 in items[0]["texts"].values()
    assert admin_client.get("/s/web/").status_code == 410  # a draft is closed to participants
    opened = admin_client.post(reverse("admin:annotation_study_open", args=[study.pk]))
    assert opened.status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.ACTIVE


def test_admin_form_errors_in_plain_words_and_nothing_stored(admin_client, corpus):
    response = admin_client.post(reverse("admin:annotation_study_create"), _form(min_correct=9))
    assert response.context["form"].errors["min_correct"] == [
        "Min correct must be between 1 and annotators per item (5), not 9."]
    response = admin_client.post(reverse("admin:annotation_study_create"), _form(corpora=[], components=["emoji"]))
    assert response.status_code == 200 and not Study.objects.exists()


def test_a_study_without_items_cannot_open(admin_client):
    empty = f.StudyFactory(slug="empty", status=Study.Status.DRAFT)
    response = admin_client.post(reverse("admin:annotation_study_open", args=[empty.pk]), follow=True)
    assert b"has no items: it cannot be opened" in response.content
    change = admin_client.post(reverse("admin:annotation_study_change", args=[empty.pk]), {
        "slug": "empty", "item_kind": "quadruple", "origin": "platform", "status": "active",
        "annotators_per_item": 5, "min_correct": 3, "items_per_batch": 14, "screening_per_batch": 2,
        "max_batches_per_participant": 5, "batch_time_limit_minutes": 30, "rewrite_min_length": 10,
        "eligibility_questions": "[]", "questions": "[]", "estimated_minutes": 10, "target_hourly_pay": 9,
    })
    assert b"opens to participants only when it has items" in change.content
    empty.refresh_from_db()
    assert empty.status == Study.Status.DRAFT


def test_api_creates_and_opens_a_study(corpus, api):
    body = {k: v for k, v in _form(slug="api-study").items() if k != "target_hourly_pay"}
    response = api.post("/api/v1/studies/", body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["status"] == "draft" and data["items"] == 5 and data["links"]["prolific"].endswith("/s/api-study/"
                                                                                                  + PROLIFIC)
    opened = api.post("/api/v1/studies/api-study/open/")
    assert opened.status_code == 200 and opened.json()["status"] == "active"
    again = api.post("/api/v1/studies/", body, format="json")
    assert again.status_code == 409 and "already exists" in again.json()["error"]["message"]
    bad = api.post("/api/v1/studies/", {**body, "slug": "x", "min_correct": 9}, format="json")
    assert bad.status_code == 400 and "min_correct" in json.dumps(bad.json())
    none = api.post("/api/v1/studies/", {**body, "slug": "y", "corpora": ["nope"]}, format="json")
    assert none.status_code == 400 and not Study.objects.filter(slug__in=["x", "y"]).exists()
    empty = f.StudyFactory(slug="empty", status=Study.Status.DRAFT)
    refused = api.post(f"/api/v1/studies/{empty.slug}/open/")
    assert_api_error(refused, code="no_items", status=409)


def test_study_pages_show_pay_with_its_currency_and_progress_linking_the_overview(admin_client, settings):
    settings.STYLECROWD_PAY_CURRENCY = "GBP"
    study, _ = f.annotated_study(answers=[["S2-S1"] * 3])
    study.responses.update(seconds=60)
    from django.contrib import admin as django_admin

    study_admin = django_admin.site._registry[Study]
    study._progress_cache = {"median_minutes_per_batch": 4.0, "effective_hourly_pay": 1039.4}
    assert study_admin.pay_summary(study) == "4.0 min/batch · 1039.40 GBP/h (target 9.00 GBP/h)"
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    # the progress is a bar and the way to the study's overview, not a raw dict of the progress API's body
    assert reverse("admin:annotation_study_overview", args=[study.pk]) in page and "{&#x27;platform" not in page
    assert '<progress max="1" value="0" aria-label="items complete"></progress> 0 of 1 items complete' in page
