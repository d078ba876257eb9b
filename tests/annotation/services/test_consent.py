"""Consent that cannot contradict the study (annotation.services.consent): the statement is generated from the
study's settings, special-category questions need their own explicit-consent statement at every door (nothing
stored on refusal) and their own tick on the participant side, and a session points at the consent version it saw,
also after the researcher edits the text."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation.models import Batch, ConsentVersion, RewriteSettings, Study
from annotation.services.consent import (
    STATEMENT_HEADING,
    consent_statement,
    consent_text_full,
    consent_version_resolve,
    special_category_check,
)
from annotation.services.persona_questions import PERSONA_QUESTIONS
from annotation.services.studies import DEFAULT_CONSENT, DEFAULT_ELIGIBILITY
from annotation.services.study_setup import study_open
from core.errors import ApplicationError
from tests.annotation.helpers import Participant, make_study

pytestmark = pytest.mark.django_db

SPECIAL = "I explicitly agree to be asked my ethnicity and my political orientation."
SOURCES = "this is the first source sentence here\nand here is a second source sentence now\n"


def _create(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    try:
        call_command("create_study", *args, stdout=out, stderr=io.StringIO())
        code = 0
    except CommandError as exc:
        code = exc.returncode
    return code, json.loads(out.getvalue().strip().splitlines()[-1])


def _pastel(tmp_path: Path, slug: str, *extra: str) -> tuple[int, dict]:
    sources = tmp_path / "sources.txt"
    sources.write_text(SOURCES)
    return _create("--slug", slug, "--kind", "rewrite", "--sources", str(sources), "--persona", "pastel",
                   "--min-words", "0", "--target-style", "formal", *extra)


def test_the_statement_of_a_pastel_study_names_every_question_the_retention_and_the_contact(tmp_path, settings):
    settings.STYLECROWD_PRIVACY_CONTACT = "privacy@lab.example"
    code, summary = _pastel(tmp_path, "pastel", "--special-category-consent", SPECIAL)
    assert code == 0, summary
    study = Study.objects.get(slug="pastel")
    statement = consent_statement(study=study)
    assert statement.startswith(STATEMENT_HEADING)
    for question in PERSONA_QUESTIONS.values():
        assert f"“{question['text']}”" in statement
    assert f"“{DEFAULT_ELIGIBILITY[0]['text']}”" in statement  # the eligibility question, by its text
    special_line = next(line for line in statement.splitlines() if "special categories" in line)
    assert "“Your ethnicity?”" in special_line and "“Your political orientation?”" in special_line
    assert "“Your age?”" not in special_line
    assert "365 days after the study is closed" in statement
    assert "privacy@lab.example" in statement and "receipt code" in statement
    assert "never records which keys you press" in statement  # a rewrite study records writing telemetry
    assert "pseudonym of the person who gave it" in statement  # per-annotator labels are published by default

    Study.objects.filter(pk=study.pk).update(retention_days=30, release_annotator_labels=False)
    study.refresh_from_db()
    changed = consent_statement(study=study)
    assert "30 days after the study is closed" in changed and "365 days" not in changed
    assert "your individual answers are not published" in changed
    full = consent_text_full(study=study)
    assert full.startswith(DEFAULT_CONSENT) and full.endswith(SPECIAL)


def test_an_ordering_study_says_no_telemetry_and_names_its_own_questions():
    native = {"name": "native", "text": "Do you read English every day?", "choices": ["yes", "no"],
              "accept": ["yes"]}
    study = make_study(slug="plain", eligibility=[native])
    statement = consent_statement(study=study)
    assert "“Do you read English every day?”" in statement
    assert "keys" not in statement and "special categories" not in statement
    assert "“Your age?”" not in statement  # no persona question asked, none named


def test_the_default_researcher_text_claims_nothing_the_statement_covers():
    assert "no other personal data" not in DEFAULT_CONSENT and "platform id" not in DEFAULT_CONSENT


def test_a_custom_question_marked_special_category_needs_the_statement_too():
    politics = {"name": "party", "text": "Which party did you vote for?", "choices": ["a", "b"],
                "special_category": True}
    with pytest.raises(ApplicationError) as refused:
        make_study(slug="party", eligibility=[politics])
    assert refused.value.field == "special_category_consent" and "party" in refused.value.message
    assert not Study.objects.filter(slug="party").exists()
    special_category_check(questions=[politics], statement="I agree to say how I voted.")  # given: no error
    study = make_study(slug="party", eligibility=[politics], special_category_consent="I agree to say how I voted.")
    assert study.special_category_consent == "I agree to say how I voted."


def test_every_door_refuses_a_pastel_study_without_the_explicit_statement(tmp_path, admin_client, api):
    code, summary = _pastel(tmp_path, "cli-pastel")
    assert code != 0 and summary["ok"] is False
    assert "special_category_consent" in summary["error"]["details"]
    assert "--special-category-consent" in summary["error"]["message"]

    body = {"slug": "api-pastel", "kind": "rewrite", "eligibility_questions": [],
            "rewrite": {"sources": [{"id": "a", "text": "this is the first source sentence here"}],
                        "target_style": "formal", "persona": ["age", "ethnicity=pastel"]}}
    response = api.post("/api/v1/studies/", body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "special_category_consent_missing" and "special_category_consent" in json.dumps(error)

    form = {"slug": "admin-pastel", "kind": "rewrite", "annotators_per_item": 2, "items_per_batch": 4,
            "max_batches": 2, "instance_status": "candidate", "seed": 0, "screening_per_batch": 2,
            "time_limit_minutes": 20, "estimated_minutes": 5, "target_hourly_pay": "9.00",
            "sources": "a\tthis is the first source sentence here", "target_style": "formal", "rewrite_max_length": 200,
            "copy_threshold": 85, "persona": "political_orientation", "filter_questions": "on", "filter_urls": "on",
            "min_words": 0, "max_words": 25, "qualify_min_accepted": 0, "qualify_min_rate": 0}
    page = admin_client.post("/admin/annotation/study/create/", form)
    assert page.status_code == 200 and "Special-category consent" in page.content.decode()
    assert not Study.objects.exists() and not RewriteSettings.objects.exists()

    created = admin_client.post("/admin/annotation/study/create/", {**form, "special_category_consent": SPECIAL})
    assert created.status_code == 302
    study = Study.objects.get(slug="admin-pastel")
    assert study.special_category_consent == SPECIAL and study.status == Study.Status.DRAFT

    Study.objects.filter(pk=study.pk).update(special_category_consent="  ")  # e.g. emptied in the database
    with pytest.raises(ApplicationError) as refused:
        study_open(study=study)
    assert refused.value.field == "special_category_consent" and "cannot be opened" in refused.value.message
    opened = api.post(f"/api/v1/studies/{study.slug}/open/")
    assert opened.status_code == 400 and opened.json()["error"]["code"] == "special_category_consent_missing"
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT


def _pastel_study(tmp_path: Path) -> Study:
    code, summary = _pastel(tmp_path, "pastel", "--special-category-consent", SPECIAL)
    assert code == 0, summary
    study = Study.objects.get(slug="pastel")
    study_open(study=study)
    return study


def test_the_session_needs_the_special_tick_and_records_the_version_it_saw(tmp_path):
    study = _pastel_study(tmp_path)
    person = Participant(APIClient(), study.slug, "5f0c1a2b3c4d5e6f7a8b9c0d")
    started = person.start()
    assert started["study"]["special_category_consent"] == SPECIAL
    assert started["study"]["consent_statement"] == consent_statement(study=study)
    receipt = started["consent_receipt"]
    assert receipt and Batch.objects.get(token=person.token).consent_receipt == receipt

    refused = person.client.post(f"/api/v1/sessions/{person.token}/consent/", {"agree": True}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "special_category_consent_missing"
    batch = Batch.objects.get(token=person.token)
    assert batch.state == Batch.State.CONSENT and batch.consent_version is None and batch.consented_at is None

    assert person.consent()["state"] == "eligibility"
    batch.refresh_from_db()
    assert batch.consented_at is not None and batch.special_consented_at == batch.consented_at
    assert batch.consent_version.text == consent_text_full(study=study)
    assert SPECIAL in batch.consent_version.text and "“Your ethnicity?”" in batch.consent_version.text


def test_an_edit_of_the_text_makes_a_new_version_and_earlier_sessions_keep_theirs():
    study = make_study(slug="versions", consent_text="Version one of our text.")
    first = Participant(APIClient(), study.slug, "AAAAAAAAAAAAAAAAAAAAAAAA")
    first.start()
    first.consent()
    second = Participant(APIClient(), study.slug, "BBBBBBBBBBBBBBBBBBBBBBBB")
    second.start()
    second.consent()
    one = Batch.objects.get(token=first.token).consent_version
    assert Batch.objects.get(token=second.token).consent_version == one  # the same text is stored once
    assert ConsentVersion.objects.count() == 1 and one.text.startswith("Version one of our text.")

    Study.objects.filter(pk=study.pk).update(consent_text="Version two, edited after participants.")
    third = Participant(APIClient(), study.slug, "CCCCCCCCCCCCCCCCCCCCCCCC")
    third.start()
    third.consent()
    two = Batch.objects.get(token=third.token).consent_version
    assert two != one and two.text.startswith("Version two") and ConsentVersion.objects.count() == 2
    assert Batch.objects.get(token=first.token).consent_version == one  # kept what they agreed to
    one.refresh_from_db()
    assert one.text.startswith("Version one of our text.")

    from annotation.selectors import study_consent_versions
    assert [(v["sha256"], v["participants"]) for v in study_consent_versions(study=study)] == [
        (one.sha256, 2), (two.sha256, 1)]


def test_the_version_is_resolved_from_the_current_text_by_its_sha256():
    study = make_study(slug="sha")
    version = consent_version_resolve(study=study)
    import hashlib
    assert version.sha256 == hashlib.sha256(consent_text_full(study=study).encode()).hexdigest()
    assert consent_version_resolve(study=study) == version and ConsentVersion.objects.count() == 1
