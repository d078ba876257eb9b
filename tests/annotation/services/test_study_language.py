"""annotation.services.study_language, and a study's language at every door: the service (default from the corpus,
else en), the API body and create_study; a tag that is not BCP 47 refused with the field named, nothing stored."""
from __future__ import annotations

import html
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.rewrites import description_compose
from annotation.services.studies import study_create
from annotation.services.study_language import participant_language_activate, study_language_warnings
from annotation.services.study_settings import study_settings_build
from tests.annotation.api.test_studies_rewrite import body
from tests.annotation.helpers import make_study
from tests.factories import CorpusFactory, TaskInstanceFactory
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db

ENGLISH = "You will read two short sentences and choose the one that sounds more formal to you."
FRENCH = "Vous allez lire deux courtes phrases et choisir celle qui vous semble la plus formelle."


def test_a_study_takes_its_corpus_language_else_english():
    TaskInstanceFactory.create_batch(4, corpus=CorpusFactory(name="fr-corpus", language="fr"))
    french = study_create(slug="from-fr-corpus", item_kind="quadruple", corpus=["fr-corpus"], eligibility_questions=[],
                          settings=study_settings_build(item_kind="quadruple", screening_per_batch=0))
    assert french.language == "fr"
    assert make_study(slug="plain").language == "en"
    assert make_study(slug="given", language="pt_br").language == "pt-BR"  # normalised


def _researcher() -> APIClient:
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("lang-boss", password="pw"))
    return api


def test_the_api_sets_and_checks_the_language():
    api = _researcher()
    created = api.post("/api/v1/studies/", {**body("api-ar"), "language": "ar"}, format="json")
    assert created.status_code == 201, created.content
    assert Study.objects.get(slug="api-ar").language == "ar" and created.json()["language"] == "ar"
    refused = api.post("/api/v1/studies/", {**body("api-bad"), "language": "english"}, format="json")
    error = assert_api_error(refused, code="invalid_language", status=400)
    assert "BCP 47" in error["message"] and "language" in json.dumps(error)
    assert not Study.objects.filter(slug="api-bad").exists()


def test_create_study_takes_language(tmp_path):
    sources = tmp_path / "sources.jsonl"
    sources.write_text("\n".join(json.dumps(row) for row in body("x")["rewrite"]["sources"]))
    common = ["--kind", "rewrite", "--sources", str(sources), "--target-style", "formel"]
    out = io.StringIO()
    call_command("create_study", "--slug", "cli-fr", "--language", "fr", *common, stdout=out)
    assert Study.objects.get(slug="cli-fr").language == "fr"
    with pytest.raises(CommandError, match="BCP 47"):
        call_command("create_study", "--slug", "cli-bad", "--language", "xx-yy-zz", *common, stdout=io.StringIO())
    assert not Study.objects.filter(slug="cli-bad").exists()


def test_activation_switches_the_language_for_the_rest_of_the_request():
    study = make_study(slug="act", language="de")
    with translation.override("en"):
        participant_language_activate(study)
        assert translation.get_language() == "de"
        assert translation.gettext("Session not found.") == "Sitzung nicht gefunden."
    assert translation.get_language() != "de" or translation.get_language() is None


def test_researcher_texts_in_another_language_are_warned_about():
    study = make_study(slug="warn", language="fr", consent_text=ENGLISH, task_description=FRENCH,
                       eligibility=[{"name": "q", "text": ENGLISH, "choices": ["oui", "non"], "accept": ["oui"]}])
    warnings = study_language_warnings(study=study)
    assert [(w["where"], w["looks_like"]) for w in warnings] == [("consent text", "en"), ("question q", "en")]
    assert "French (fr)" in warnings[0]["message"] and "English (en)" in warnings[0]["message"]
    study.consent_text = FRENCH
    study.eligibility_questions = []
    assert study_language_warnings(study=study) == []


def test_the_setup_preview_warns_about_a_text_in_another_language(admin_client):
    study = make_study(slug="warn-page", language="fr", consent_text=ENGLISH, task_description=FRENCH)
    page = html.unescape(admin_client.get(reverse("admin:annotation_study_preview", args=[study.pk])).content.decode())
    assert "Language: fr" in page
    assert "The consent text looks like English (en), but the study's language is French (fr)" in page
    assert "task description looks like" not in page


def test_generated_defaults_are_in_the_study_language():
    """The default consent text and a rewrite study's composed instructions (texts no researcher wrote) follow the
    study's language; a researcher's own text stays as written."""
    assert make_study(slug="fr-default", language="fr").consent_text.startswith("Nous vous invitons à participer")
    assert make_study(slug="en-default").consent_text.startswith("You are invited to take part")
    assert make_study(slug="fr-own", language="fr", consent_text="Texte à moi.").consent_text == "Texte à moi."
    french = description_compose(target_style="formel", examples=[{"source": "salut", "rewrite": "Bonjour."}],
                                 min_length=10, max_length=80, language="fr")
    assert french.startswith("Réécrivez chaque phrase pour qu’elle soit formel") and "Exemples :" in french
    assert "Original : salut\nRéécriture : Bonjour." in french
    assert translation.get_language() == "en-us" or translation.get_language().startswith("en")
