"""Recruitment by the study's language: Prolific's first-language (or fluent-languages) filter, its ids read from
Prolific's filter list and the draft validated against Prolific's description by the fake; the researcher's own filter
wins; an unknown language is a warning, never a guessed id; switched off at every door; MTurk says it has none."""
from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import call_command

from core.errors import ApplicationError
from core.models import Job
from platforms.backends.prolific_terms import language_filter
from platforms.celery_tasks import platform_job_task
from platforms.models import PlatformAccount, PlatformStudy
from platforms.services.accounts import platform_study_for
from platforms.services.publish import platform_preflight, platform_publish, study_plan
from platforms.services.recruit_language import language_filter_kind
from tests import factories as f
from tests.platforms.conftest import paid_study

pytestmark = pytest.mark.django_db
CREATE = r"^/api/v1/studies/$"
FIRST_FRENCH = {"filter_id": "first-language", "selected_values": ["2"]}


def draft_filters(fake: Any) -> list[dict[str, Any]]:
    return fake.calls_to("POST", CREATE)[-1].body["filters"]


def test_a_french_study_s_draft_carries_prolific_s_french_first_language_filter(prolific_account,
                                                                               fake_prolific) -> None:
    summary = platform_publish(study=paid_study(language="fr-FR"), account=prolific_account)
    assert FIRST_FRENCH in draft_filters(fake_prolific)   # the fake validated the body against the spec
    assert fake_prolific.violations == [] and fake_prolific.calls_to("GET", r"/api/v1/filters/")
    assert "first language is French" in summary["language"][0]
    stored = PlatformStudy.objects.get(external_id=summary["external_id"]).recruitment_language
    assert stored["filter"] == FIRST_FRENCH and stored["language"] == "fr-FR"  # what the card states later
    counted = fake_prolific.calls_to("POST", r"/api/v1/eligibility-count/")[-1].body["filters"]
    assert FIRST_FRENCH in counted  # the eligible count is of French speakers too


def test_fluent_languages_on_request(prolific_account, fake_prolific) -> None:
    platform_publish(study=paid_study(language="de"), account=prolific_account, language_filter="fluent")
    assert {"filter_id": "fluent-languages", "selected_values": ["103"]} in draft_filters(fake_prolific)
    assert not any(flt["filter_id"] == "first-language" for flt in draft_filters(fake_prolific))


def test_the_researcher_s_own_language_filter_wins(prolific_account, fake_prolific) -> None:
    own = {"filter_id": "first-language", "selected_values": ["3"]}
    summary = platform_publish(study=paid_study(language="fr"), account=prolific_account, filters=[own])
    language_filters = [flt for flt in draft_filters(fake_prolific) if flt["filter_id"] == "first-language"]
    assert language_filters == [own] and "your own" in summary["language"][0]


def test_an_unknown_language_is_a_warning_not_a_guessed_id(prolific_account, fake_prolific) -> None:
    summary = platform_publish(study=paid_study(language="sw"), account=prolific_account)
    assert [flt["filter_id"] for flt in draft_filters(fake_prolific)] == ["participant_group_blocklist"]
    assert summary["language"][0].startswith("Warning") and "Swahili" in summary["language"][0]


def test_an_option_that_is_none_of_the_four_is_refused(prolific_account, fake_prolific) -> None:
    with pytest.raises(ApplicationError) as exc:
        platform_publish(study=paid_study(language="fr"), account=prolific_account, language_filter="klingon")
    assert exc.value.field == "language_filter" and fake_prolific.calls_to("POST", CREATE) == []


def test_no_filter_of_that_title_is_a_warning() -> None:
    filter_, note = language_filter([{"filter_id": "age", "title": "Age", "type": "range"}], kind="first",
                                    language_name="French", own=[])
    assert filter_ is None and note.startswith("Warning") and "First language" in note
    found, _ = language_filter([{"filter_id": "x1", "title": "FIRST LANGUAGE", "type": "select",
                                 "choices": {"7": "french"}}], kind="first", language_name="French", own=[])
    assert found == {"filter_id": "x1", "selected_values": ["7"]}  # titles and labels compared case-insensitively


def test_english_studies_keep_today_s_draft_unless_asked(prolific_account, fake_prolific) -> None:
    assert language_filter_kind(mode="auto", language="en-GB") == ""
    summary = platform_publish(study=paid_study(language="en"), account=prolific_account)
    assert [flt["filter_id"] for flt in draft_filters(fake_prolific)] == ["participant_group_blocklist"]
    assert fake_prolific.calls_to("GET", r"/api/v1/filters/") == [] and "English" in summary["language"][0]
    platform_publish(study=paid_study(language="en"), account=prolific_account, language_filter="first")
    assert {"filter_id": "first-language", "selected_values": ["1"]} in draft_filters(fake_prolific)


def test_switched_off_in_the_service_and_the_preflight(prolific_account, fake_prolific) -> None:
    study = paid_study(language="fr")
    platform_publish(study=study, account=prolific_account, language_filter="off")
    assert not any(flt["filter_id"] == "first-language" for flt in draft_filters(fake_prolific))
    assert "switched off" in platform_preflight(platform_study=PlatformStudy.objects.get(study=study))["language"][0]


def test_switched_off_by_the_command(prolific_account, fake_prolific, capsys) -> None:
    study = paid_study(language="fr")
    call_command("platform_publish", "--study", study.slug, "--account", "lab", "--no-language-filter")
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert not any(flt["filter_id"] == "first-language" for flt in draft_filters(fake_prolific))
    assert "switched off" in summary["language"][0]


def test_switched_off_by_the_api_body(prolific_account, fake_prolific, api) -> None:
    study = paid_study(language="fr")
    queued = api.post(f"/api/v1/studies/{study.slug}/platform/publish/", {"account": "lab", "language_filter": "off"},
                      format="json")
    assert queued.status_code == 202
    platform_job_task(queued.json()["job"]["id"])
    assert Job.objects.get(pk=queued.json()["job"]["id"]).status == Job.Status.DONE
    assert not any(flt["filter_id"] == "first-language" for flt in draft_filters(fake_prolific))
    bad = api.post(f"/api/v1/studies/{paid_study(language='fr').slug}/platform/publish/",
                   {"account": "lab", "language_filter": "klingon"}, format="json")
    assert bad.status_code == 400 and "language_filter" in json.dumps(bad.json())


def test_switched_off_by_the_admin_publish_form(prolific_account, fake_prolific, admin_client) -> None:
    study = paid_study(language="fr")
    page = admin_client.get(f"/admin/platforms/platformstudy/publish/{study.pk}/")
    assert b"language_filter" in page.content
    response = admin_client.post(f"/admin/platforms/platformstudy/publish/{study.pk}/",
                                 {"account": prolific_account.pk, "language_filter": "off"})
    assert response.status_code == 302
    platform_job_task(Job.objects.latest("pk").pk)
    assert not any(flt["filter_id"] == "first-language" for flt in draft_filters(fake_prolific))


def test_mturk_says_in_words_it_has_no_language_qualification(platform_settings) -> None:
    turk = PlatformAccount.objects.create(name="turk", platform="mturk", sandbox=True)
    study = f.StudyFactory(status="active", platform="mturk", language="fr", allow_anonymous=False,
                           target_hourly_pay=12, estimated_minutes=10)
    f.annotated_study(answers=[["S2-S1"] * 3], study=study)
    plan = study_plan(platform_study=platform_study_for(study=study, account=turk), key="k")
    assert plan.filters == [] and "no country is guessed from French" in plan.notes[0]
    assert "00000000000000000071" in plan.notes[0]
