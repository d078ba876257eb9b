"""Participant page fixes (issue 23, point 4), each in Chromium against the live server: a refused link says why
and what to do (no "Try again" that cannot succeed), the first-answer grace is said before and on the first item,
number keys work on the practice screen, and on a phone the rewrite prompt keeps clear of the text box."""
from __future__ import annotations

import math
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Batch, ItemKind, Participant
from annotation.services.practice import practice_items_set
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.accessibility import assert_accessible
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import COMPLETED, answer_ordering_item, on_screen, quadruple_study
from tests.annotation.test_views_preview import PRACTICE

PROLIFIC_TEMPLATE = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
transactional = pytest.mark.django_db(transaction=True)


# --- refused links ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_link_with_placeholders_or_from_another_platform_is_explained_not_retried(client: Any) -> None:
    study = quadruple_study("refused", platform="prolific", allow_anonymous=False)
    placeholders = client.get(f"/s/{study.slug}/{PROLIFIC_TEMPLATE}")
    text = placeholders.content.decode()
    assert placeholders.status_code == 400 and "This link cannot open the study" in text
    assert "still holds a placeholder" in text and "PROLIFIC_PID" in text and "not something you did" in text
    assert "Return submission" in text and "There is no code to enter" in text
    assert "annotator.js" not in text and "Try again" not in text  # nothing that would open a session, no retry
    anonymous = client.get(f"/s/{study.slug}/").content.decode()
    assert "takes participants from Prolific only" in anonymous and "go back to Prolific" in anonymous
    mturk = quadruple_study("refused-mturk", platform="mturk", allow_anonymous=False)
    text = client.get(f"/s/{mturk.slug}/?workerId=${{workerId}}&assignmentId=A&hitId=H").content.decode()
    assert "${workerId}" in text and "return the HIT" in text and "Prolific" not in text
    assert not Participant.objects.exists() and not Batch.objects.exists()


@transactional
def test_a_refused_link_in_the_browser_shows_why_with_no_try_again(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("refused-browser", platform="prolific", allow_anonymous=False)
    page.goto(f"{live_server.url}/s/{study.slug}/{PROLIFIC_TEMPLATE}")
    assert page.inner_text("h1") == "This link cannot open the study"
    shots(page, "refused-placeholders")
    assert_accessible(page, "the refused-link page")
    # The API may still refuse a link the page let through (its checks are the same, but say the page was cached):
    # the page explains it and offers no retry.
    page.route("**/api/v1/studies/*/sessions/", lambda route: route.fulfill(
        status=400, content_type="application/json",
        body='{"error": {"code": "invalid_link", "message": "SESSION_ID: is missing or malformed.", '
             '"details": {"SESSION_ID": ["is missing or malformed."]}}}'))
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=5f1c0ffee0ddba11c0ffee01"
              "&STUDY_ID=5f1c0ffee0ddba11c0ffee02&SESSION_ID=S1")
    on_screen(page, "refused")
    assert page.inner_text("#refused-heading") == "This link cannot open the study"
    assert "SESSION_ID" in page.inner_text("#refused-message")
    assert "go back to Prolific" in page.inner_text("#refused-todo")
    assert not page.is_visible("#error-retry") and "Something went wrong" not in page.inner_text("body")
    shots(page, "refused-by-the-api")
    assert_accessible(page, "the refused screen of the participant page")
    assert page.js_errors == []


# --- the first-answer grace -------------------------------------------------------------------------------


@transactional
def test_the_first_answer_grace_is_said_before_the_start_and_on_the_first_item(page: Any, live_server: Any,
                                                                                shots: Any) -> None:
    study = quadruple_study("grace", items=2, screening=0, eligibility_questions=[], first_answer_grace_seconds=120)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=slowreader&STUDY_ID=S&SESSION_ID=G")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    assert page.inner_text("#instructions-timing") == (
        "Once the first item is shown, please answer it within 2 minutes, however long you take to read it: "
        "otherwise your place goes to someone else. After your first answer you have 30 minutes for the whole batch.")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert page.is_visible("#grace-note")
    assert page.inner_text("#grace-note").startswith("Answer this first item within 2 minutes to keep your place")
    # The clock counts down the server's own first-answer deadline (the batch's expiry until its first answer).
    held_until = Batch.objects.get(study=study).expires_at
    minutes = math.ceil((held_until - timezone.now()).total_seconds() / 60)
    assert page.inner_text("#time-left") == f"{minutes} min to give your first answer"
    shots(page, "grace-first-item")
    answer_ordering_item(page)
    assert not page.is_visible("#grace-note")
    assert page.inner_text("#time-left") in {"30 min left", "29 min left"}  # now the batch's time limit
    assert page.js_errors == []


@transactional
def test_an_expired_grace_is_shown_when_it_expires_with_its_own_cause(page: Any, live_server: Any,
                                                                      shots: Any) -> None:
    """Before: the clock kept reading "Less than a minute to give your first answer" after the grace had run out,
    and only an answer (refused) led to an ending that blamed "the time limit for this batch" ("1 minutes")."""
    study = quadruple_study("grace-out", items=2, screening=0, eligibility_questions=[], first_answer_grace_seconds=4,
                            time_limit_minutes=1)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=idlereader&STUDY_ID=S&SESSION_ID=G")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert "After your first answer you have 1 minute for the whole batch." in page.inner_text("#grace-note")
    assert "1 minutes" not in page.inner_text("body")
    on_screen(page, "end")  # nothing clicked: the page itself turns when the grace runs out
    assert page.evaluate("document.body.dataset.ending") == "grace_expired"
    assert page.inner_text("#end-heading") == "Your time for a first answer has run out"
    message = page.inner_text("#end-message")
    assert "No first answer arrived within 4 seconds" in message and "time limit for this batch" not in message
    assert "Return submission" in page.inner_text("#end-todo")
    shots(page, "grace-expired")
    assert_accessible(page, "the expired first-answer grace")
    page.reload()  # the server's expired session without an answer: the same cause, not the batch's time limit
    on_screen(page, "end")
    assert page.inner_text("#end-heading") == "Your time for a first answer has run out"
    assert page.js_errors == []


@pytest.mark.django_db
def test_no_grace_note_when_the_grace_is_as_long_as_the_time_limit(client: Any) -> None:
    study = quadruple_study("no-grace", items=1, screening=0, first_answer_grace_seconds=3600)
    page = client.get(f"/s/{study.slug}/")
    assert page.context["config"]["timing"]["grace_seconds"] == 0
    assert "You have 30 minutes for the whole batch." in page.content.decode()


# --- practice by keyboard ---------------------------------------------------------------------------------


@transactional
def test_number_keys_and_enter_answer_the_practice_as_its_badges_say(page: Any, live_server: Any,
                                                                      shots: Any) -> None:
    study = quadruple_study("practice-keys", items=1, screening=0, eligibility_questions=[])
    practice_items_set(study=study, items=PRACTICE * 2)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=typist01&STUDY_ID=S&SESSION_ID=K")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "practice")
    assert page.is_visible("#practice-body .choice .key")  # the badges the keys follow
    assert "press" in page.inner_text("#practice-hint")
    page.keyboard.press("2")
    assert page.is_checked("#practice-body input[value='S2-S1']") and not page.is_disabled("#practice-submit")
    page.keyboard.press("Enter")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    assert page.inner_text("#practice-feedback").startswith("Correct: S2 goes with A1 and S1 goes with A2.")
    page.keyboard.press("1")  # answered: the keys no longer change the answer
    assert page.is_checked("#practice-body input[value='S2-S1']")
    shots(page, "practice-keys")
    page.keyboard.press("Enter")  # Continue (focused)
    page.wait_for_function("() => document.querySelector('#practice-count').textContent.includes('2 of 2')")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    assert page.inner_text("#practice-feedback").startswith("Not quite: S2 goes with A1 and S1 goes with A2.")
    page.keyboard.press("Enter")
    on_screen(page, "item")
    answer_ordering_item(page)
    on_screen(page, "done")
    assert page.inner_text("#done-code") == COMPLETED
    assert page.js_errors == []


# --- the rewrite prompt on a phone ------------------------------------------------------------------------


@transactional
def test_on_a_phone_the_rewrite_prompt_stays_clear_of_the_text_box(phone_page: Any, live_server: Any,
                                                                    shots: Any) -> None:
    page = phone_page
    study = study_create(
        slug="phone-rewrite", item_kind=ItemKind.REWRITE, rewrite_min_length=20, eligibility_questions=[],
        items=[{"id": "rw-1", "source": "gonna be late lol, the bus never came and my phone died so sorry",
                "target_style": "formal"}],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED, consent_text="Rewrite sentences."),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=phonewriter&STUDY_ID=S&SESSION_ID=P")
    on_screen(page, "consent")
    page.tap("#consent-agree")
    on_screen(page, "instructions")
    page.tap("#instructions-start")
    on_screen(page, "item")
    page.wait_for_function("document.activeElement.id === 'rewrite-text'")  # focused: its focus ring is drawn
    prompt = page.locator("label[for=rewrite-text]").bounding_box()
    box = page.locator("#rewrite-text").bounding_box()
    ring = page.evaluate("(() => { const s = getComputedStyle(document.getElementById('rewrite-text'));"
                         " return parseFloat(s.outlineWidth) + parseFloat(s.outlineOffset); })()")
    assert prompt["y"] + prompt["height"] <= box["y"] - ring, (prompt, box, ring)
    # Whatever is drawn at the prompt's last line is the prompt, not the text box.
    on_top = page.evaluate("([x, y]) => document.elementFromPoint(x, y).getAttribute('for')",
                           [prompt["x"] + 20, prompt["y"] + prompt["height"] - 4])
    assert on_top == "rewrite-text"
    shots(page, "phone-rewrite")
    assert_accessible(page, "the rewrite item on a phone")
    assert page.js_errors == []
