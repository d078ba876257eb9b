"""The participant page, its JavaScript catalog and the annotator API in the study's language: `lang` and `dir` on
the page, the French and Arabic catalogs used, English where the study is English (the default), and the API's
participant errors (an expired batch, an unknown session, a full study) in the study's language."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Reservation, Response
from annotation.services.rewrites import rewrite_study_create
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study, serving_path, settings_pop  # noqa: F401 (fixture)
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db
LINK = "?PROLIFIC_PID=lang1&STUDY_ID=S&SESSION_ID=lang1"


def test_a_french_study_page_is_french(client):
    make_study(slug="fr-page", language="fr")
    html = client.get("/s/fr-page/" + LINK).content.decode()
    assert '<html lang="fr" dir="ltr">' in html
    assert "J’accepte — continuer" in html and "Je n’accepte pas" in html and "Consentement" in html
    assert "I agree — continue" not in html and "Something went wrong" not in html
    assert "Ce que nous enregistrons, et pour combien de temps" in html  # the generated consent statement
    assert "/i18n/fr/annotator.js" in html


def test_an_arabic_study_page_is_right_to_left(client):
    make_study(slug="ar-page", language="ar")
    html = client.get("/s/ar-page/" + LINK).content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    assert "أوافق — متابعة" in html


def test_an_english_study_stays_english(client):
    make_study(slug="en-page")
    html = client.get("/s/en-page/" + LINK).content.decode()
    assert '<html lang="en" dir="ltr">' in html and "I agree — continue" in html


def test_the_unavailable_page_is_in_the_study_language(client):
    study = make_study(slug="fr-closed", language="fr")
    study.status = "closed"
    study.save()
    html = client.get("/s/fr-closed/").content.decode()
    assert '<html lang="fr"' in html and "est clôturée" in html


def test_the_javascript_catalog_is_in_the_language_named(client):
    french = client.get("/i18n/fr/annotator.js").content.decode()
    assert "Code copi\\u00e9." in french or "Code copié." in french
    assert "function gettext" in french or "django.gettext" in french
    german = client.get("/i18n/de/annotator.js").content.decode()
    assert "Code kopiert." in german
    unknown = client.get("/i18n/english/annotator.js")
    assert unknown.status_code == 200 and "Code copi" not in unknown.content.decode()


@pytest.mark.usefixtures("serving_path")
def test_an_expired_batch_is_refused_in_french():
    client = APIClient()
    study = make_study(slug="fr-expired", n_instances=2, per_batch=2, k=1, language="fr")
    p = P(client, study.slug, "PID-fr-late")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    Reservation.objects.filter(batch__token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    Batch.objects.filter(token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    error = assert_api_error(p.answer(item["id"], item["choices"][0]), code="expired", status=410)
    assert error["message"] == "Le temps imparti pour ce lot est écoulé."
    # the next request of the same thread is back to English for an English study
    english = make_study(slug="en-after", n_instances=1, per_batch=1, k=1)
    missing = client.get("/api/v1/sessions/unknown-token/next/")
    assert assert_api_error(missing, code="not_found", status=404)["message"] == "Session not found."
    assert english.language == "en"


@pytest.mark.usefixtures("serving_path")
def test_an_item_not_reserved_is_refused_in_german():
    client = APIClient()
    study = make_study(slug="de-item", n_instances=2, per_batch=2, k=1, language="de")
    p = P(client, study.slug, "PID-de-1")
    p.start()
    p.consent()
    p.next()
    error = assert_api_error(p.answer("notmine", "S1-S2"), code="not_reserved", status=404)
    assert error["message"] == "Dieses Element ist für diese Sitzung nicht reserviert."


def test_a_session_open_elsewhere_is_refused_in_italian():
    study = make_study(slug="it-elsewhere", n_instances=2, per_batch=2, k=1, language="it")
    first = P(APIClient(), study.slug, "PID-it-1")
    first.start()
    first.consent()
    first.next()
    other_browser = APIClient().post(f"/api/v1/studies/{study.slug}/sessions/",
                                     {"participant": "PID-it-1", "platform": "prolific"}, format="json")
    error = assert_api_error(other_browser, code="session_in_progress", status=409)
    assert error["message"].startswith("Questo studio è già in corso in un altro browser o dispositivo.")


def _rewrite_study(slug: str, language: str) -> Any:
    study, _ = rewrite_study_create(
        slug=slug, sources=[("s1", "salut tu viens vendredi pour le truc"), ("s2", "je vais être en retard désolé")],
        target_style="formal", min_length=20, max_length=80, eligibility_questions=[], filters={"min_words": 0},
        settings=settings_pop({}, annotators_per_item=1, items_per_batch=2, max_batches=1), language=language)
    return study


@pytest.mark.usefixtures("serving_path")
def test_answer_checks_speak_the_study_language():
    """The answer checks' 400s (too short, too long, a copy, not a string) in French on both serving paths; the
    `code` and the `details` key stay as they are; nothing is stored."""
    study = _rewrite_study("fr-checks", "fr")
    p = P(APIClient(), study.slug, "PID-fr-checks")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    short = assert_api_error(p.answer(item["id"], "Trop court."), code="invalid", status=400)
    assert short["message"] == "la réécriture doit compter au moins 20 caractères ; elle en a 11."
    assert short["details"] == {"answer": [short["message"]]}
    long = assert_api_error(p.answer(item["id"], "Voulez-vous " * 10), code="invalid", status=400)
    assert long["message"].startswith("la réécriture peut compter au plus 80 caractères")
    not_text = assert_api_error(p.answer(item["id"], ["a"]), code="invalid", status=400)
    assert not_text["message"] == "la réponse doit être une chaîne de caractères."
    assert not Response.objects.filter(study=study).exists()
    # the thread is back in English: an English study's check is English
    english = _rewrite_study("en-checks", "en")
    q = P(APIClient(), english.slug, "PID-en-checks")
    q.start()
    q.consent()
    other = q.next().json()["item"]
    assert assert_api_error(q.answer(other["id"], "Too short."), code="invalid", status=400)["message"] == (
        "the rewrite needs at least 20 characters, got 10.")


@pytest.mark.usefixtures("serving_path")
def test_an_answer_outside_the_choices_is_refused_in_arabic():
    study = make_study(slug="ar-choice", n_instances=2, per_batch=2, k=1, language="ar")
    p = P(APIClient(), study.slug, "PID-ar-choice")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    error = assert_api_error(p.answer(item["id"], "nope"), code="invalid", status=400)
    assert error["message"].startswith("يجب أن تكون الإجابة واحدة من") and "S1-S2" in error["message"]


def test_link_errors_speak_the_study_language():
    make_study(slug="es-link", language="es")
    refused = APIClient().post("/api/v1/studies/es-link/sessions/",
                               {"participant": "{{%PROLIFIC_PID%}}", "platform": "prolific"}, format="json")
    error = assert_api_error(refused, code="invalid_link", status=400)
    assert error["message"].startswith("PROLIFIC_PID: el enlace todavía contiene un marcador sin sustituir")
    assert list(error["details"]) == ["PROLIFIC_PID"]
