"""Data minimisation (annotation.services.persona_platform): persona attributes a Prolific study reads from the
platform are not asked on the participant page, the consent statement names them as read from Prolific, the mapping
keeps only PASTEL's choices, and a study on another platform is refused at every door with nothing stored."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation.models import Batch, RewriteSettings, Study
from annotation.services.consent import consent_statement, consent_text_full
from annotation.services.data_plan import data_plan_markdown
from annotation.services.persona_platform import (
    _country,
    persona_from_demographics,
    platform_persona_attributes,
    questions_asked,
)
from annotation.services.persona_questions import ETHNICITY_LISTS, PERSONA_QUESTIONS
from annotation.services.study_setup import study_open

pytestmark = pytest.mark.django_db

SOURCES = "this is the first source sentence here\nand here is a second source sentence now\n"
PID = "5f0c1a2b3c4d5e6f7a8b9c0d"
STUDY_REF = "a" * 24


def _start(pid: str, slug: str) -> tuple[APIClient, str, dict]:
    """A Prolific participant's session, from their link's parameters."""
    client = APIClient()
    response = client.post(f"/api/v1/studies/{slug}/sessions/", {"participant": pid, "platform": "prolific",
                                                                 "study_ref": STUDY_REF, "session_ref": pid[::-1]},
                           format="json")
    assert response.status_code in (200, 201), response.content
    body = response.json()
    consent = client.post(f"/api/v1/sessions/{body['token']}/consent/", {"agree": True}, format="json")
    assert consent.status_code == 200, consent.content
    return client, body["token"], body


def _create(tmp_path: Path, slug: str, *extra: str) -> tuple[int, dict]:
    sources = tmp_path / "sources.txt"
    sources.write_text(SOURCES)
    out = io.StringIO()
    try:
        call_command("create_study", "--slug", slug, "--kind", "rewrite", "--sources", str(sources),
                     "--min-words", "0", "--target-style", "formal", *extra, stdout=out, stderr=io.StringIO())
        code = 0
    except CommandError as exc:
        code = exc.returncode
    return code, json.loads(out.getvalue().strip().splitlines()[-1])


def _prolific_study(tmp_path: Path) -> Study:
    code, summary = _create(tmp_path, "minimal", "--platform", "prolific", "--persona", "gender,age",
                            "--persona-from-platform", "age,country", "--eligibility", "none")
    assert code == 0, summary
    study = Study.objects.get(slug="minimal")
    study_open(study=study)
    return study


def test_the_page_does_not_ask_what_prolific_gives_and_the_consent_names_it(tmp_path):
    study = _prolific_study(tmp_path)
    assert platform_persona_attributes(study=study) == ["age", "country"]
    assert [q["name"] for q in questions_asked(study.eligibility_questions)] == ["gender"]
    assert RewriteSettings.objects.get(study=study).persona_questions == ["gender", "age", "country"]

    client, token, started = _start(PID, study.slug)
    assert [q["name"] for q in started["study"]["eligibility_questions"]] == ["gender"]
    page = APIClient().get(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_REF}&SESSION_ID=S1")
    assert page.status_code == 200
    html = page.content.decode()
    assert PERSONA_QUESTIONS["gender"]["text"] in html
    assert PERSONA_QUESTIONS["age"]["text"] not in html and PERSONA_QUESTIONS["country"]["text"] not in html

    assert Batch.objects.get(token=token).state == Batch.State.ELIGIBILITY
    answered = client.post(f"/api/v1/sessions/{token}/eligibility/", {"answers": {"gender": "female"}},
                           format="json")
    assert answered.status_code == 200, answered.content
    batch = Batch.objects.get(token=token)
    assert batch.participant.persona == {"gender": "female"}  # nothing asked about age or country
    client, token, _ = _start("6f0c1a2b3c4d5e6f7a8b9c0e", study.slug)
    refused = client.post(f"/api/v1/sessions/{token}/eligibility/",
                          {"answers": {"gender": "male", "age": "18-24"}}, format="json")
    assert refused.status_code == 400  # an answer to a question not asked is not taken

    statement = consent_statement(study=study)
    platform_line = next(line for line in statement.splitlines() if "Read from Prolific" in line)
    assert "age, country" in platform_line and "nothing else of that profile is kept" in platform_line
    asked_line = next(line for line in statement.splitlines() if "questions about yourself" in line)
    assert "“Your gender?”" in asked_line and "“Your age?”" not in asked_line
    assert platform_line in consent_text_full(study=study)
    markdown, _ = data_plan_markdown(study=study)
    assert "Data minimisation: age, country are read from Prolific" in markdown


def test_a_special_category_read_from_prolific_still_needs_the_explicit_statement(tmp_path):
    code, summary = _create(tmp_path, "eth", "--platform", "prolific", "--persona-from-platform", "ethnicity")
    assert code != 0 and summary["error"]["code"] == "special_category_consent_missing"
    code, summary = _create(tmp_path, "eth", "--platform", "prolific", "--persona-from-platform", "ethnicity",
                            "--special-category-consent", "I agree that my ethnicity is read from Prolific.")
    assert code == 0, summary
    study = Study.objects.get(slug="eth")
    assert "Read from Prolific instead of asked: your ethnicity" in consent_statement(study=study)
    assert questions_asked([q for q in study.eligibility_questions if q.get("persona")]) == []
    # Read from Prolific, ethnicity is Prolific's own list, its values kept as Prolific gives them.
    (ethnicity,) = [q for q in study.eligibility_questions if q.get("persona")]
    assert ethnicity["choices"] == ETHNICITY_LISTS["prolific"] and ethnicity["special_category"] is True
    read = {raw: persona_from_demographics(study=study, demographics={"Ethnicity simplified": raw})
            for raw in ("Black", "mixed", "Prefer not to say", "CONSENT_REVOKED", "Hispanic")}
    assert read == {"Black": {"ethnicity": "Black"}, "mixed": {"ethnicity": "Mixed"},
                    "Prefer not to say": {"ethnicity": "prefer not to say"}, "CONSENT_REVOKED": {}, "Hispanic": {}}
    # The column as Prolific's API reference names it is read as well.
    assert persona_from_demographics(study=study, demographics={"Ethnicity (simplified)": "Asian"}) == {
        "ethnicity": "Asian"}


def test_an_english_pastel_study_reads_prolifics_ethnicity_into_pastels_list(tmp_path):
    code, summary = _create(tmp_path, "eth-pastel", "--platform", "prolific", "--persona", "ethnicity=pastel",
                            "--persona-from-platform", "ethnicity", "--special-category-consent", "I agree.")
    assert code == 0, summary
    study = Study.objects.get(slug="eth-pastel")
    (ethnicity,) = [q for q in study.eligibility_questions if q.get("persona")]
    assert ethnicity["choices"] == PERSONA_QUESTIONS["ethnicity"]["choices"] and ethnicity["from_platform"]
    read = {raw: persona_from_demographics(study=study, demographics={"Ethnicity simplified": raw})["ethnicity"]
            for raw in ("White", "Black", "Mixed", "Other")}
    assert read == {"White": "White", "Black": "Black or African American", "Mixed": "mixed", "Other": "other"}


def test_own_choices_cannot_be_read_from_prolific(tmp_path):
    own = tmp_path / "persona.json"
    own.write_text(json.dumps([{"name": "ethnicity", "choices": [{"value": "a", "label": "A"},
                                                                 {"value": "b", "label": "B"}]}]))
    code, summary = _create(tmp_path, "eth-own", "--platform", "prolific", "--persona", str(own),
                            "--persona-from-platform", "ethnicity", "--special-category-consent", "I agree.")
    assert code != 0 and summary["error"]["code"] == "persona_from_platform_unavailable"
    assert "ethnicity=prolific" in summary["error"]["message"] and not Study.objects.exists()


def test_demographics_are_mapped_to_pastel_choices_and_nothing_else_is_kept(tmp_path):
    study = _prolific_study(tmp_path)
    snapshot = {"Age": "37", "Country of residence": "Germany", "Sex": "Female", "Nationality": "Germany",
                "Employment status": "Full-Time", "Student status": "No"}
    assert persona_from_demographics(study=study, demographics=snapshot) == {"age": "35-44", "country": "Germany"}
    assert persona_from_demographics(study=study, demographics={"Age": "DATA_EXPIRED",
                                                                "Country of residence": "United Kingdom"}) == {
        "country": "United Kingdom"}
    assert persona_from_demographics(study=study, demographics={"Age": "not a number"}) == {}
    assert persona_from_demographics(study=study, demographics={"Age": "80"}) == {"age": "75+"}
    assert persona_from_demographics(study=study, demographics={"Current country of residence": "Japan"}) == {
        "country": "Japan"}


def test_every_door_refuses_reading_from_a_platform_other_than_prolific(tmp_path, admin_client, api):
    for platform in ("any", "mturk"):
        code, summary = _create(tmp_path, f"cli-{platform}", "--platform", platform, "--persona-from-platform",
                                "age")
        assert code != 0 and summary["error"]["code"] == "persona_from_platform_unavailable", summary
        assert "--persona-from-platform" in summary["error"]["message"] or "prolific" in summary["error"]["message"]
    code, summary = _create(tmp_path, "cli-politics", "--platform", "prolific", "--persona-from-platform",
                            "political_orientation")
    assert code != 0 and summary["error"]["code"] == "persona_from_platform_unavailable"

    body = {"slug": "api-any", "kind": "rewrite", "eligibility_questions": [], "platform": "mturk",
            "rewrite": {"sources": [{"id": "a", "text": "this is the first source sentence here"}],
                        "target_style": "formal", "persona_from_platform": "age,gender"}}
    response = api.post("/api/v1/studies/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "persona_from_platform_unavailable"

    form = {"slug": "admin-any", "kind": "rewrite", "annotators_per_item": 2, "items_per_batch": 4,
            "max_batches": 2, "instance_status": "candidate", "seed": 0, "screening_per_batch": 2,
            "time_limit_minutes": 20, "estimated_minutes": 5, "target_hourly_pay": "9.00", "platform": "any",
            "sources": "a\tthis is the first source sentence here", "target_style": "formal", "rewrite_max_length": 200,
            "copy_threshold": 85, "persona_from_platform": "age", "filter_questions": "on", "filter_urls": "on",
            "min_words": 0, "max_words": 25, "qualify_min_accepted": 0, "qualify_min_rate": 0}
    page = admin_client.post("/admin/annotation/study/create/", form)
    assert page.status_code == 200 and "only a Prolific study" in page.content.decode()
    assert not Study.objects.exists() and not RewriteSettings.objects.exists()

    created = admin_client.post("/admin/annotation/study/create/", {**form, "platform": "prolific"})
    assert created.status_code == 302, created.content.decode()[:2000]
    assert platform_persona_attributes(study=Study.objects.get(slug="admin-any")) == ["age"]
    created = api.post("/api/v1/studies/", {**body, "slug": "api-prolific", "platform": "prolific"}, format="json")
    assert created.status_code == 201, created.content
    assert platform_persona_attributes(study=Study.objects.get(slug="api-prolific")) == ["age", "gender"]


def test_the_country_question_offers_every_iso_country_and_maps_prolifics_names():
    choices = PERSONA_QUESTIONS["country"]["choices"]
    assert len(choices) > 240 and {"Brazil", "Nigeria", "India", "Germany", "Japan", "Egypt"} <= set(choices)
    assert "U.S.A." not in choices and choices[-1] == "prefer not to say"
    mapped = {name: _country(name) for name in ("Brazil", "USA", "Türkiye", "Atlantis")}
    assert mapped == {"Brazil": "Brazil", "USA": "United States", "Türkiye": "Turkey", "Atlantis": None}
