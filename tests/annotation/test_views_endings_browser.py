"""Every ending of the participant page, per platform, in headless Chromium against the live server and PostgreSQL.

Endings: finished (code + the platform's way to finish), screened out (its own code + what to do), timed out (no
code; return the submission on Prolific, the HIT on MTurk), declined consent (recorded on the server; a reload
shows the declined ending again) and a full study (never "thank you for taking part"). Prolific links end with the
study's completion URL carrying the code; MTurk links with MTurk's external submit form (posted, in the test, to an
intercepted MTurk sandbox) and never a Prolific button; anonymous links with the code.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

import pytest
from django.utils import timezone

from annotation.models import Batch, Reservation, Response
from annotation.services.session_creation import session_create
from annotation.services.sessions import session_consent, session_start
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import (
    COMPLETED,
    REDIRECT,
    SCREENED_OUT,
    answer_ordering_item,
    on_screen,
    quadruple_study,
)

pytestmark = pytest.mark.django_db(transaction=True)
browser_test = pytest.mark.browser

PLATFORMS = ["prolific", "mturk", "anonymous"]
MTURK_SANDBOX = "https://workersandbox.mturk.com"
RETURN_WORDS = {"prolific": "Return submission", "mturk": "return the HIT", "anonymous": "close this page"}


def link(live_server: Any, slug: str, platform: str, pid: str) -> str:
    base = f"{live_server.url}/s/{slug}/"
    if platform == "prolific":
        return f"{base}?PROLIFIC_PID={pid}&STUDY_ID=STUDY1&SESSION_ID=SESS-{pid}"
    if platform == "mturk":
        return f"{base}?workerId={pid}&assignmentId=ASG-{pid}&hitId=HIT1&turkSubmitTo={MTURK_SANDBOX}"
    return base


def consent_and_start(page: Any) -> None:
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")


def assert_no_code_and_return_words(page: Any, platform: str) -> None:
    assert not page.is_visible("#end-code-block")
    assert not page.is_visible("#end-redirect")
    assert not page.is_visible("#end-mturk-submit") if platform == "mturk" else True
    assert RETURN_WORDS[platform] in page.inner_text("#end-todo")
    body = page.inner_text("body")
    assert "Thank you for taking part" not in body and COMPLETED not in body and SCREENED_OUT not in body


def intercept_mturk(page: Any) -> list[dict[str, list[str]]]:
    """MTurk's sandbox, intercepted: what the page posts to `/mturk/externalSubmit` (nothing leaves the machine)."""
    posted: list[dict[str, list[str]]] = []

    def handle(route: Any) -> None:
        posted.append(parse_qs(route.request.post_data or ""))
        route.fulfill(status=200, content_type="text/html", body="<h1>MTurk received the assignment</h1>")

    page.route(f"{MTURK_SANDBOX}/**", handle)
    return posted


@browser_test
@pytest.mark.parametrize("platform", PLATFORMS)
def test_finished(page: Any, live_server: Any, shots: Any, platform: str) -> None:
    study = quadruple_study(f"end-done-{platform}", items=2, screening=0, eligibility_questions=[])
    posted = intercept_mturk(page)
    page.goto(link(live_server, study.slug, platform, "5f3e1c2b9a8d7e6f5a4b3c2d"))
    consent_and_start(page)
    while page.evaluate("document.body.dataset.screen") == "item":
        answer_ordering_item(page)
    on_screen(page, "done")
    shots(page, f"finished-{platform}")
    assert page.inner_text("#done-code") == COMPLETED
    assert page.evaluate("document.body.dataset.ending") == "completed"
    shown = [line.strip() for line in page.inner_text("[data-screen=done]").splitlines() if line.strip()]
    assert len(shown) == len(set(shown)), shown  # no sentence twice
    if platform == "anonymous":  # an open link: no platform to speak of, and the button's own word
        assert "platform" not in " ".join(shown).lower() and "Click \u201cContinue\u201d to finish." in shown
    if platform == "mturk":
        assert not page.is_visible("#done-redirect")  # no Prolific button on MTurk
        assert page.get_attribute("#mturk-submit", "action") == f"{MTURK_SANDBOX}/mturk/externalSubmit"
        assert "Submit the HIT" in page.inner_text("#done-todo")
        page.click("#mturk-submit button")
        page.wait_for_selector("text=MTurk received the assignment")
        assert posted == [{"assignmentId": ["ASG-5f3e1c2b9a8d7e6f5a4b3c2d"], "completion_code": [COMPLETED]}]
    else:
        assert not page.is_visible("#mturk-submit") if page.query_selector("#mturk-submit") else True
        assert page.get_attribute("#done-redirect", "href") == REDIRECT.format(code=COMPLETED)
        label = page.inner_text("#done-redirect")
        assert label == ("Go to Prolific to finish" if platform == "prolific" else "Continue")
    assert page.js_errors == []


@browser_test
@pytest.mark.parametrize("platform", PLATFORMS)
def test_screened_out(page: Any, live_server: Any, shots: Any, platform: str) -> None:
    study = quadruple_study(f"end-screened-{platform}", items=2, screening=0)
    posted = intercept_mturk(page)
    page.goto(link(live_server, study.slug, platform, "SCREENEDWORKER1"))
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("no").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "end")
    shots(page, f"screened-out-{platform}")
    assert page.evaluate("document.body.dataset.ending") == "screened_out"
    assert page.inner_text("#end-heading") == "This study is not a match for you"
    assert page.inner_text("#end-code") == SCREENED_OUT and COMPLETED not in page.inner_text("body")
    message = page.inner_text("#end-message")  # an open link has no platform to pay for the screening
    assert ("does not come with a payment" in message and "compensated" not in message if platform == "anonymous"
            else "You will be compensated for the screening" in message)
    if platform == "mturk":
        assert not page.is_visible("#end-redirect")
        assert "Submit the HIT" in page.inner_text("#end-todo")
        page.click("#end-mturk-submit button")
        page.wait_for_selector("text=MTurk received the assignment")
        assert posted == [{"assignmentId": ["ASG-SCREENEDWORKER1"], "completion_code": [SCREENED_OUT]}]
    else:
        assert page.get_attribute("#end-redirect", "href") == REDIRECT.format(code=SCREENED_OUT)
        assert ("screened-out code on Prolific" if platform == "prolific" else "keep this code") in page.inner_text(
            "#end-todo")
    if platform == "anonymous":  # an open link: no platform to speak of
        assert "platform" not in page.inner_text("[data-screen=end]").lower()
    assert page.js_errors == []


@browser_test
@pytest.mark.parametrize("platform", PLATFORMS)
def test_timed_out(page: Any, live_server: Any, shots: Any, platform: str) -> None:
    study = quadruple_study(f"end-timeout-{platform}", items=3, screening=0, eligibility_questions=[])
    page.goto(link(live_server, study.slug, platform, "SLOWWORKER1"))
    consent_and_start(page)
    answer_ordering_item(page)
    batch = Batch.objects.get(study=study)
    past = timezone.now() - timedelta(minutes=1)
    Batch.objects.filter(pk=batch.pk).update(expires_at=past)
    Reservation.objects.filter(batch=batch).update(expires_at=past)
    page.click('label[data-choice="S1-S2"]')
    page.click("#item-submit")
    on_screen(page, "end")
    shots(page, f"timed-out-{platform}")
    assert page.inner_text("#end-heading") == "Your time has run out"
    assert page.evaluate("document.body.dataset.ending") == "expired"
    assert_no_code_and_return_words(page, platform)
    page.reload()  # the same ending again, not a new batch
    on_screen(page, "end")
    assert page.inner_text("#end-heading") == "Your time has run out"
    assert Batch.objects.filter(study=study).count() == 1
    assert page.js_errors == []


@browser_test
@pytest.mark.parametrize("platform", PLATFORMS)
def test_declined(page: Any, live_server: Any, shots: Any, platform: str) -> None:
    study = quadruple_study(f"end-declined-{platform}", items=2, screening=0)
    page.goto(link(live_server, study.slug, platform, "DECLINER1"))
    on_screen(page, "consent")
    page.click("#consent-decline")
    on_screen(page, "end")
    shots(page, f"declined-{platform}")
    assert page.inner_text("#end-heading") == "You chose not to take part"
    assert_no_code_and_return_words(page, platform)
    batch = Batch.objects.get(study=study)
    assert batch.state == Batch.State.DECLINED and batch.consented_at is None  # recorded on the server
    page.reload()  # not the consent page again
    on_screen(page, "end")
    assert page.inner_text("#end-heading") == "You chose not to take part"
    assert not page.is_visible("[data-screen=consent]")
    assert Batch.objects.filter(study=study).count() == 1 and not Response.objects.exists()
    assert page.js_errors == []


@browser_test
@pytest.mark.parametrize("platform", PLATFORMS)
def test_full_study(page: Any, live_server: Any, shots: Any, platform: str) -> None:
    study = quadruple_study(f"end-full-{platform}", items=1, screening=0, eligibility_questions=[],
                            annotators_per_item=1, min_correct=1)
    holder = session_create(slug=study.slug, participant_id="5f3e1c2b9a8d7e6f5a4b3c2e", platform="prolific")
    session_consent(token=holder.batch.token, agree=True)
    session_start(token=holder.batch.token)  # the only slot is taken
    page.goto(link(live_server, study.slug, platform, "LATECOMER1"))
    on_screen(page, "end")
    shots(page, f"full-{platform}")
    assert page.inner_text("#end-heading") == "This study is full"
    assert page.evaluate("document.body.dataset.ending") == "full"
    assert_no_code_and_return_words(page, platform)
    assert "Thank you" not in page.inner_text("body")
    assert page.js_errors == []
