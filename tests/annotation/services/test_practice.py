"""Practice items with feedback before the first batch: configurable per study, never counted as answers, shown
once per participant (JSON API); the browser test walks through them."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation.models import PracticeAnswer, Response, Study
from annotation.services.practice import practice_items_set
from tests.annotation.helpers import Participant, make_study
from tests.helpers import assert_api_error

PRACTICE = [
    {"anchor_1": "hey whats up", "anchor_2": "Hello, how are you?", "sentence_1": "Thank you for your letter.",
     "sentence_2": "thx 4 the msg", "correct_answer": "S2-S1",
     "explanation": "S2 is written like A1 (casual), S1 like A2 (formal)."},
    {"anchor_1": "I cannot attend.", "anchor_2": "cant come lol", "sentence_1": "We would be delighted.",
     "sentence_2": "sure thing!!", "correct_answer": "S1-S2", "explanation": "S1 is formal, like A1."},
]


def practice_url(p: Participant) -> str:
    return f"/api/v1/sessions/{p.token}/practice/"


@pytest.mark.django_db
def test_practice_items_are_answered_with_feedback_once_and_never_counted() -> None:
    study = make_study(slug="prac", eligibility=[])
    practice_items_set(study=study, items=PRACTICE)
    client = APIClient()
    p = Participant(client, "prac", "PID1")
    p.start()
    assert client.get(practice_url(p)).status_code == 409  # consent first
    p.consent()
    first = client.get(practice_url(p)).json()
    assert first["total"] == 2 and first["remaining"] == 2
    item = first["item"]
    assert set(item) == {"id", "kind", "position", "texts", "choices"} and item["choices"] == ["S1-S2", "S2-S1"]
    assert "correct_answer" not in json.dumps(first)  # the answer comes only as feedback, after answering
    wrong = client.post(practice_url(p), {"item": item["id"], "answer": "S1-S2"}, format="json").json()
    assert wrong == {"item": item["id"], "correct": False, "correct_answer": "S2-S1",
                     "explanation": PRACTICE[0]["explanation"], "remaining": 1}
    again = client.post(practice_url(p), {"item": item["id"], "answer": "S2-S1"}, format="json")
    assert_api_error(again, code="answer_conflict", status=409)
    bad = client.post(practice_url(p), {"item": "practice-999999", "answer": "S1-S2"}, format="json")
    assert_api_error(bad, code="not_found", status=404)
    second = client.get(practice_url(p)).json()["item"]
    invalid = client.post(practice_url(p), {"item": second["id"], "answer": "maybe"}, format="json")
    assert_api_error(invalid, code="invalid", status=400)
    right = client.post(practice_url(p), {"item": second["id"], "answer": "S1-S2"}, format="json").json()
    assert right["correct"] is True and right["remaining"] == 0
    assert client.get(practice_url(p)).json() == {"item": None, "remaining": 0, "total": 2}
    # never counted: no responses; the batch plays as usual afterwards
    assert not Response.objects.exists() and PracticeAnswer.objects.count() == 2
    client.post(f"/api/v1/sessions/{p.token}/start/", {}, format="json")
    p.play()
    assert Response.objects.filter(participant__external_id="PID1").count() == study.items_per_batch
    # once per participant: a later session of the same participant has nothing left to practise
    again_p = Participant(client, "prac", "PID1")
    session = again_p.start()
    assert session["token"] != p.token
    if session["state"] == "consent":
        again_p.consent()
    assert client.get(practice_url(again_p)).json() == {"item": None, "remaining": 0, "total": 2}


@pytest.mark.django_db
def test_admin_lists_practice_items(admin_client) -> None:  # noqa: ANN001
    study = make_study(slug="adm", eligibility=[])
    practice_items_set(study=study, items=PRACTICE)
    page = admin_client.get("/admin/annotation/practiceitem/")
    assert page.status_code == 200 and b"hey whats up" in page.content
    assert admin_client.get("/admin/annotation/practiceanswer/add/").status_code == 403


@pytest.mark.django_db
def test_study_without_practice_items_has_none() -> None:
    make_study(slug="plain", eligibility=[])
    client = APIClient()
    p = Participant(client, "plain", "PID2")
    p.start()
    p.consent()
    assert client.get(practice_url(p)).json() == {"item": None, "remaining": 0, "total": 0}


@pytest.mark.django_db
def test_create_study_takes_practice_items_from_a_file(tmp_path: Path) -> None:
    from tests.factories import TaskInstanceFactory

    TaskInstanceFactory.create_batch(4)
    (tmp_path / "practice.json").write_text(json.dumps(PRACTICE), encoding="utf-8")
    out = io.StringIO()
    call_command("create_study", "--slug", "with-practice", "--setup", "quadruple", "--screening-per-batch", "0",
                 "--practice", str(tmp_path / "practice.json"), stdout=out, stderr=io.StringIO())
    assert json.loads(out.getvalue().strip().splitlines()[-1])["practice_items"] == 2
    broken = [dict(PRACTICE[0], correct_answer="S3")]
    (tmp_path / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(CommandError, match="practice item 1: correct_answer"):
        call_command("create_study", "--slug", "broken", "--setup", "quadruple", "--screening-per-batch", "0",
                     "--practice", str(tmp_path / "broken.json"), stdout=io.StringIO(), stderr=io.StringIO())
    assert not Study.objects.filter(slug="broken").exists()  # nothing half-stored




# --- in the browser -------------------------------------------------------------------------------------

from tests.annotation.conftest_browser import *  # noqa: E402,F403
from tests.annotation.test_views_browser import (  # noqa: E402
    answer_ordering_item,
    on_screen,
    quadruple_study,
    start_from_link,
)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_practice_comes_first_with_feedback_in_the_browser(page, live_server, shots) -> None:  # noqa: ANN001
    study = quadruple_study("browser-practice", items=2, screening=0)
    practice_items_set(study=study, items=PRACTICE)
    start_from_link(page, live_server, study, "?PROLIFIC_PID=5f1cPRACTICE1&STUDY_ID=S&SESSION_ID=X")
    page.get_by_label("yes").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "practice")
    assert "Practice 1 of 2" in page.inner_text("[data-screen=practice]")
    assert page.is_disabled("#practice-submit")
    page.click('#practice-body label[data-choice="S1-S2"]')  # wrong on purpose
    page.click("#practice-submit")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    # In the words the choices are drawn in, never the code "S2-S1".
    assert "Not quite: S2 goes with A1 and S1 goes with A2." in page.inner_text("#practice-feedback")
    assert "S2-S1" not in page.inner_text("#practice-feedback")
    assert PRACTICE[0]["explanation"] in page.inner_text("#practice-feedback")
    shots(page, "practice-feedback")
    page.click("#practice-continue")
    page.wait_for_function("() => document.querySelector('#practice-count').textContent.includes('2 of 2')")
    page.click('#practice-body label[data-choice="S1-S2"]')
    page.click("#practice-submit")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    assert page.inner_text("#practice-feedback").startswith("Correct: S1 goes with A1 and S2 goes with A2.")
    page.click("#practice-continue")
    on_screen(page, "item")  # the batch starts only now, and practice answers are not responses
    assert not Response.objects.filter(study=study).exists()
    assert PracticeAnswer.objects.filter(item__study=study).count() == 2
    for _ in range(2):
        answer_ordering_item(page)
    on_screen(page, "done")
    assert Response.objects.filter(study=study).count() == 2
    assert page.js_errors == []


