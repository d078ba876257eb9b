"""The persona questionnaire (annotation.services.persona_questions): ethnicity asked only with categories that fit
the study (PASTEL's US-census list in an English study naming it, Prolific's list, or the researcher's own), and a
researcher's own questions with value/label choices, validated (every problem located, nothing stored), shown by
label and stored by value, at every door (create_study, the admin form, the API body)."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation.models import Participant, RewriteSettings, Study
from annotation.services.persona_questions import (
    ETHNICITY_LISTS,
    PERSONA_QUESTIONS,
    choice_pairs,
    persona_questions_build,
)
from annotation.services.rewrites import rewrite_study_create
from core.errors import ApplicationError
from tests.annotation.helpers import Participant as Person
from tests.annotation.helpers import settings_pop

pytestmark = pytest.mark.django_db

SPECIAL = "I explicitly agree to be asked my ethnicity."
SOURCE = "salut tu viens demain au boulot ou pas"
# A researcher's own ethnicity categories for a study in France's overseas departments, say: values to store, French
# labels to show.
OWN = {"name": "ethnicity", "text": "Comment décririez-vous vos origines ?", "choices": [
    {"value": "caribbean", "label": "Antillaises"}, {"value": "european", "label": "Européennes"},
    {"value": "south_asian", "label": "Indiennes"}, {"value": "other", "label": "Autres"},
    {"value": "prefer not to say", "label": "Je préfère ne pas répondre"}]}


def _create(tmp_path: Path, slug: str, *extra: str) -> tuple[int, dict[str, Any]]:
    sources = tmp_path / "sources.txt"
    sources.write_text(f"{SOURCE}\n")
    out = io.StringIO()
    try:
        call_command("create_study", "--slug", slug, "--kind", "rewrite", "--sources", str(sources), "--min-words",
                     "0", "--target-style", "formal", "--eligibility", "none", *extra, stdout=out,
                     stderr=io.StringIO())
        code = 0
    except CommandError as exc:
        code = exc.returncode
    return code, json.loads(out.getvalue().strip().splitlines()[-1])


def _study(slug: str, persona: list[Any], language: str = "fr", **settings: Any) -> Study:
    study, _ = rewrite_study_create(
        slug=slug, sources=[("s1", SOURCE)], target_style="soutenu", eligibility_questions=[],
        filters={"min_words": 0}, persona=persona, language=language,
        settings=settings_pop(dict(settings), annotators_per_item=1, items_per_batch=1, max_batches=1))
    return study


def _api_body(slug: str, persona: list[Any], language: str = "fr") -> dict[str, Any]:
    return {"slug": slug, "kind": "rewrite", "eligibility_questions": [], "language": language,
            "special_category_consent": SPECIAL,
            "rewrite": {"sources": [{"id": "a", "text": SOURCE}], "target_style": "formal", "persona": persona,
                        "filters": {"min_words": 0}}}


def _admin_form(slug: str, persona: str) -> dict[str, Any]:
    return {"slug": slug, "kind": "rewrite", "annotators_per_item": 2, "items_per_batch": 4, "max_batches": 2,
            "instance_status": "candidate", "seed": 0, "screening_per_batch": 2, "time_limit_minutes": 20,
            "estimated_minutes": 5, "target_hourly_pay": "9.00", "platform": "any", "sources": f"a\t{SOURCE}",
            "target_style": "formal", "rewrite_max_length": 200, "copy_threshold": 85, "persona": persona,
            "special_category_consent": SPECIAL, "filter_questions": "on", "filter_urls": "on", "min_words": 0,
            "max_words": 25, "qualify_min_accepted": 0, "qualify_min_rate": 0}


# --- ethnicity: categories that fit the study --------------------------------------------------------------------


def test_an_english_pastel_study_keeps_pastels_us_census_list() -> None:
    """`--persona pastel` (or `ethnicity=pastel`) in an English study asks today's question, values unchanged."""
    built = persona_questions_build(attributes=["pastel"], language="en")
    assert [q["name"] for q in built] == list(PERSONA_QUESTIONS)
    ethnicity = built[2]
    assert ethnicity == {"name": "ethnicity", "persona": True, **PERSONA_QUESTIONS["ethnicity"]}
    assert "Black or African American" in ethnicity["choices"] and ethnicity["special_category"] is True
    assert persona_questions_build(attributes=["ethnicity=pastel"], language="en-GB") == [ethnicity]
    # A plain `ethnicity` keeps its earlier meaning in an English study: PASTEL's list, as before.
    assert persona_questions_build(attributes=["ethnicity"], language="en") == [ethnicity]


@pytest.mark.parametrize(("attributes", "language", "said"), [
    (["ethnicity"], "fr", "differ from country to country"),
    (["age", "ethnicity"], "de-AT", "differ from country to country"),
    (["ethnicity=pastel"], "fr", "English studies only, and this study's language is 'fr'"),
    (["pastel"], "de", "English studies only, and this study's language is 'de'"),
    ([{"name": "ethnicity", "choices": "pastel"}], "pt-BR", "English studies only"),
    (["ethnicity=census"], "en", "no list named 'census'"),
])
def test_ethnicity_without_fitting_categories_is_refused_naming_the_options(attributes, language, said) -> None:
    with pytest.raises(ApplicationError) as refused:
        persona_questions_build(attributes=attributes, language=language)
    error = refused.value
    assert error.code == "ethnicity_categories_required" and error.field == "persona"
    assert said in error.message and "(ethnicity" in error.message
    for option in ("ethnicity=prolific", "ethnicity=pastel", '"value"', '"label"', "docs/data-protection.md"):
        assert option in error.message


def test_only_ethnicity_takes_a_list_and_a_question_is_asked_once() -> None:
    with pytest.raises(ApplicationError, match=r"question 1 \('age=prolific'\): only ethnicity takes a list"):
        persona_questions_build(attributes=["age=prolific"])
    with pytest.raises(ApplicationError, match="age asked more than once"):
        persona_questions_build(attributes=["age", "gender", {"name": "age", "choices": ["young", "old"]}])


def test_every_door_refuses_ethnicity_without_fitting_categories_and_stores_nothing(
        tmp_path: Path, admin_client: Any, api: APIClient) -> None:
    code, summary = _create(tmp_path, "cli-eth", "--persona", "age,ethnicity=census",
                            "--special-category-consent", SPECIAL)
    assert code != 0 and summary["error"]["code"] == "ethnicity_categories_required"
    assert summary["error"]["details"]["field"] == "persona" and "ethnicity=prolific" in summary["error"]["message"]

    response = api.post("/api/v1/studies/", _api_body("api-eth", ["ethnicity=pastel"]), format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "ethnicity_categories_required" and "persona" in error["details"]
    assert "English studies only" in error["message"]

    page = admin_client.post("/admin/annotation/study/create/", _admin_form("admin-eth", "ethnicity=census"))
    assert page.status_code == 200 and "no list named" in page.content.decode()  # not the help
    assert not Study.objects.exists() and not RewriteSettings.objects.exists()

    created = admin_client.post("/admin/annotation/study/create/", _admin_form("admin-eth", "age, ethnicity=prolific"))
    assert created.status_code == 302, created.content.decode()[:2000]
    ethnicity = Study.objects.get(slug="admin-eth").eligibility_questions[-1]
    assert ethnicity["choices"] == ETHNICITY_LISTS["prolific"] and ethnicity["special_category"] is True


def test_prolifics_list_in_a_french_study_shows_french_labels_and_stores_prolifics_values(client: Any) -> None:
    study = _study("rw-prolific-fr", ["ethnicity=prolific"], special_category_consent=SPECIAL)
    (ethnicity,) = study.eligibility_questions
    assert ethnicity["text"] == "Votre origine ethnique ?" and ethnicity["special_category"] is True
    assert ethnicity["choices"] == ["White", "Mixed", "Asian", "Black", "Other", "prefer not to say"]
    assert ethnicity["choice_labels"] == {"White": "Blanc", "Mixed": "Métis", "Asian": "Asiatique", "Black": "Noir",
                                          "Other": "Autre", "prefer not to say": "je préfère ne pas répondre"}
    html = client.get("/s/rw-prolific-fr/?PROLIFIC_PID=p1&STUDY_ID=S&SESSION_ID=p1").content.decode()
    assert '<input type="radio" name="elig-ethnicity" value="Black" required>' in html
    assert "<span>Noir</span>" in html and "<span>Black</span>" not in html
    person = Person(APIClient(), "rw-prolific-fr", "p2")
    person.start()
    person.consent()
    url = f"/api/v1/sessions/{person.token}/eligibility/"
    refused = person.client.post(url, {"answers": {"ethnicity": "Noir"}}, format="json")
    assert refused.status_code == 400 and "Votre origine ethnique ?" in refused.json()["error"]["message"]
    assert person.client.post(url, {"answers": {"ethnicity": "Black"}}, format="json").status_code == 200
    assert Participant.objects.get(external_id="p2").persona == {"ethnicity": "Black"}


# --- a researcher's own questions: value/label choices ---------------------------------------------------------


def test_own_categories_are_shown_by_label_stored_by_value_and_need_the_special_consent(client: Any) -> None:
    with pytest.raises(ApplicationError) as refused:
        _study("rw-own-no-consent", [OWN])  # named ethnicity, so special-category, though not marked so
    assert refused.value.code == "special_category_consent_missing"
    assert not Study.objects.filter(slug="rw-own-no-consent").exists()

    study = _study("rw-own", [OWN, {"name": "region", "choices": ["nord", "sud"]}],
                   special_category_consent=SPECIAL)
    ethnicity, region = study.eligibility_questions
    assert ethnicity == {"name": "ethnicity", "text": OWN["text"], "persona": True, "special_category": True,
                         "choices": ["caribbean", "european", "south_asian", "other", "prefer not to say"],
                         "choice_labels": {"caribbean": "Antillaises", "european": "Européennes",
                                           "south_asian": "Indiennes", "other": "Autres",
                                           "prefer not to say": "Je préfère ne pas répondre"}}
    assert region == {"name": "region", "text": "region", "choices": ["nord", "sud"], "persona": True}
    html = client.get("/s/rw-own/?PROLIFIC_PID=p1&STUDY_ID=S&SESSION_ID=p1").content.decode()
    assert '<input type="radio" name="elig-ethnicity" value="caribbean" required>' in html
    assert "<span>Antillaises</span>" in html and "<span>caribbean</span>" not in html

    person = Person(APIClient(), "rw-own", "p2")
    person.start()
    asked = {q["name"]: q for q in person.consent()["study"]["eligibility_questions"]}
    assert asked["ethnicity"]["choice_labels"]["south_asian"] == "Indiennes"
    url = f"/api/v1/sessions/{person.token}/eligibility/"
    refused = person.client.post(url, {"answers": {"ethnicity": "Indiennes", "region": "nord"}}, format="json")
    assert refused.status_code == 400 and set(refused.json()["error"]["details"]) == {"ethnicity"}
    answered = person.client.post(url, {"answers": {"ethnicity": "south_asian", "region": "nord"}}, format="json")
    assert answered.status_code == 200, answered.content
    assert Participant.objects.get(external_id="p2").persona == {"ethnicity": "south_asian", "region": "nord"}


def test_an_own_question_without_text_takes_pastels_text_in_the_study_language() -> None:
    (own,) = persona_questions_build(language="de", attributes=[
        {"name": "ethnicity", "choices": [{"value": "a", "label": "Sorbisch"}, {"value": "b", "label": "Andere"}]}])
    assert own["text"] == "Ihre ethnische Zugehörigkeit?" and own["special_category"] is True


@pytest.mark.parametrize(("choices", "problems"), [
    ([{"value": "a", "label": "A"}, {"value": "a", "label": "B"}], ["choice 2: value 'a' repeats choice 1"]),
    ([{"value": "a", "label": "A"}, {"value": "b", "label": " "}, {"value": "", "label": "C"}],
     ["choice 2: empty 'label'", "choice 3: empty 'value'"]),
    ([{"value": "a", "label": "Same"}, {"value": "b", "label": "Same"}], ["choice 2: label 'Same' repeats choice 1"]),
    ([{"value": "a"}, {"value": "b", "label": "B", "lable": "typo"}],
     ["choice 1: empty 'label'", "choice 2: unknown key 'lable'"]),
    (["north", "north", None], ["choice 3: a value or", "choice 2: value 'north' repeats choice 1"]),
    (["only one"], ["fewer than 2 choices"]),
])
def test_bad_choices_are_refused_each_located(choices: list[Any], problems: list[str]) -> None:
    with pytest.raises(ApplicationError) as refused:
        choice_pairs(choices, where="question 2 (origin)")
    error = refused.value
    assert error.field == "persona" and error.message.startswith("Persona: question 2 (origin)")
    located = error.details["persona"]
    assert len(located) == len(problems)
    for line, problem in zip(located, problems, strict=True):
        assert line.startswith("question 2 (origin)") and problem in line


def test_bad_choices_store_nothing_at_any_door(tmp_path: Path, api: APIClient) -> None:
    bad = [{"name": "region", "choices": ["nord", "sud"]},
           {"name": "ethnicity", "choices": [{"value": "x", "label": "Première"}, {"value": "x", "label": ""}]}]
    questions = tmp_path / "persona.json"
    questions.write_text(json.dumps(bad))
    code, summary = _create(tmp_path, "cli-bad", "--persona", str(questions), "--special-category-consent", SPECIAL)
    assert code != 0, summary
    message = summary["error"]["message"]
    assert "question 2 (ethnicity)" in message and "choice 2: empty 'label'" in message
    assert "choice 2: value 'x' repeats choice 1" in message

    response = api.post("/api/v1/studies/", _api_body("api-bad", bad), format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"]["persona"] == [
        "question 2 (ethnicity), choice 2: empty 'label'", "question 2 (ethnicity), choice 2: value 'x' repeats "
                                                           "choice 1"]
    assert not Study.objects.exists() and not RewriteSettings.objects.exists()

    good = [bad[0], OWN]
    created = api.post("/api/v1/studies/", _api_body("api-good", good), format="json")
    assert created.status_code == 201, created.content
    ethnicity = Study.objects.get(slug="api-good").eligibility_questions[-1]
    assert ethnicity["choices"][0] == "caribbean" and ethnicity["choice_labels"]["caribbean"] == "Antillaises"
    questions.write_text(json.dumps(good))
    code, summary = _create(tmp_path, "cli-good", "--persona", str(questions), "--special-category-consent", SPECIAL)
    assert code == 0, summary
    assert Study.objects.get(slug="cli-good").eligibility_questions[-1] == ethnicity
