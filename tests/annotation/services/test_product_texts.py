"""The product's own texts in the study's language (issue 33): the rating presets' questions, scale labels and
descriptions and the default descriptions are stored translated in a study in another language, through the doors
a researcher uses (create_study, the JSON API) and seen on the participant page and in the session; a researcher's
own questions and description stay as written; an English study stores the English texts it always stored."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import polib
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.product_texts import (
    DESCRIPTIONS_WRITTEN,
    PAULI_DESCRIPTION,
    QUESTION_PRESETS,
    product_description,
    product_questions,
)
from tests.annotation.helpers import Participant as Person

pytestmark = pytest.mark.django_db

DEMO = Path(settings.BASE_DIR) / "scoring" / "demo"
LOCALE = Path(settings.BASE_DIR) / "locale"
LINK = "?PROLIFIC_PID=p1&STUDY_ID=S&SESSION_ID=p1"


def _create(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("create_study", *args, "--eligibility", "none", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _likert(slug: str, preset: str, *extra: str) -> Study:
    _create("--slug", slug, "--kind", "likert", "--preset", preset, "--outputs", str(DEMO / "likert_demo_items.jsonl"),
            *extra)
    return Study.objects.get(slug=slug)


def test_a_french_pauli_study_rates_on_french_scales(client: Any) -> None:
    study = _likert("pauli-fr", "pauli", "--language", "fr")
    assert [q["text"] for q in study.questions] == [
        "À quel point la réécriture présente-t-elle le style cible ?",
        "Dans quelle mesure la réécriture préserve-t-elle le contenu de l'original ?"]
    assert study.questions[0]["labels"] == {"1": "Pas du tout", "2": "Légèrement", "3": "Modérément",
                                            "4": "Fortement", "5": "Complètement"}
    # names, scales and levels are the preset's: answers and agreement refer to them
    assert [(q["name"], q["min"], q["max"], q["level"]) for q in study.questions] == [
        (q["name"], q["min"], q["max"], q["level"]) for q in QUESTION_PRESETS["pauli"]]
    assert study.task_description.startswith("Dans chaque question, vous voyez une phrase d'origine")
    html = client.get(f"/s/{study.slug}/" + LINK).content.decode()
    assert "Pas du tout" in html and "Not at all" not in html and "How strongly" not in html
    person = Person(APIClient(), study.slug, "p2")
    person.start()
    shown = person.consent()["study"]
    assert shown["questions"][1]["labels"]["3"] == "En partie" and "vous voyez" in shown["task_description"]


def test_a_german_gyafc_study_rates_and_ranks_in_german() -> None:
    likert = _likert("gyafc-de", "gyafc", "--language", "de")
    assert [q["text"] for q in likert.questions] == [
        "Wie förmlich ist die Umformulierung?", "Wie flüssig ist die Umformulierung?",
        "Wie viel von der Bedeutung des Originals behält die Umformulierung?"]
    assert likert.questions[0]["labels"]["-3"] == "Sehr informell" and likert.questions[2]["labels"]["6"] == (
        "Völlig gleichwertig")
    _create("--slug", "gyafc-rank-ar", "--kind", "ranking", "--preset", "gyafc", "--language", "ar", "--outputs",
            str(DEMO / "likert_demo_items.jsonl"))
    ranking = Study.objects.get(slug="gyafc-rank-ar")
    assert ranking.task_description.startswith("في كل سؤال ترى جملة غير رسمية وعدة إعادات صياغة رسمية")


def test_an_english_preset_study_stores_the_english_texts() -> None:
    study = _likert("pauli-en", "pauli")
    assert study.language == "en" and study.questions == QUESTION_PRESETS["pauli"]
    assert study.task_description == PAULI_DESCRIPTION


def test_the_default_descriptions_are_in_the_study_language() -> None:
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="pw"))
    items = [{"id": "a", "source": "u r late", "rewrite": "Vous êtes en retard."}]
    for slug, language, start in (("lik-it", "it", "In ogni domanda vedi una frase originale e una sua riscrittura"),
                                  ("lik-en", "en", "In each question you see an original sentence and a rewrite")):
        response = api.post("/api/v1/studies/", {
            "slug": slug, "kind": "likert", "items": items, "questions": "mind-the-style-gap",
            "eligibility_questions": [], "language": language}, format="json")
        assert response.status_code == 201, response.content
        study = Study.objects.get(slug=slug)
        assert study.task_description.startswith(start)
    assert Study.objects.get(slug="lik-it").questions[0]["labels"]["5"] == "Ottimo"
    assert Study.objects.get(slug="lik-en").questions == QUESTION_PRESETS["mind-the-style-gap"]


def test_a_researchers_own_texts_stay_as_written() -> None:
    own = [{**QUESTION_PRESETS["pauli"][0], "text": "How strongly does the rewrite show the target style, really?"}]
    assert product_questions(own, language="fr") == own  # a preset changed is the researcher's own
    assert product_description("Lisez et notez.", language="fr") == "Lisez et notez."
    assert product_description(PAULI_DESCRIPTION, language="es").startswith("En cada pregunta verá una oración")
    study = _likert("pauli-own", "pauli", "--language", "pt-BR", "--task-description", "Leia com atenção.")
    assert study.task_description == "Leia com atenção." and study.questions[0]["text"] == (
        "O quanto a reescrita mostra o estilo-alvo?")


def test_every_product_text_is_in_every_catalog() -> None:
    texts = set(DESCRIPTIONS_WRITTEN)
    for preset in QUESTION_PRESETS.values():
        for question in preset:
            texts |= {question["text"], *question["labels"].values()}
    for language in ("fr", "de", "es", "it", "pt_BR", "ar"):
        catalog = {entry.msgid: entry for entry in polib.pofile(str(LOCALE / language / "LC_MESSAGES" / "django.po"))
                   if entry.msgctxt is None and not entry.obsolete}
        missing = [text for text in texts if text not in catalog or not catalog[text].translated()]
        assert missing == [], language

