"""Taking over a session by participant id, against a live server.

The attack: POST sessions/ with a known PROLIFIC_PID returned that participant's open token; the attacker answered the
victim's screening questions wrongly and the victim was excluded. Now only the browser that started a session
resumes it, and a participant who finished sees their code again, never a new batch.
"""
from __future__ import annotations

import pytest

from annotation.models import Batch, Participant, Response
from tests.adversarial.crowd import Browser, hex24
from tests.annotation.helpers import make_study
from tests.helpers import assert_api_error

ELIGIBILITY = [{"name": "native", "text": "Native speaker?", "choices": ["yes", "no"], "accept": ["yes"]}]


def _prolific_study(slug: str) -> tuple:
    study_id = hex24()
    study = make_study(n_instances=8, k=3, per_batch=4, screening=2, slug=slug, eligibility=ELIGIBILITY,
                       platform="prolific", prolific_study_id=study_id)
    return study, study_id


@pytest.mark.django_db(transaction=True)
def test_a_second_browser_with_a_known_participant_id_gets_no_token_and_cannot_act(live_server):
    study, study_id = _prolific_study("hijack")
    link = {"participant": hex24(), "platform": "prolific", "study_ref": study_id, "session_ref": hex24()}
    victim = Browser(live_server.url, study.slug)
    created = victim.open(**link)
    assert created.status_code == 201
    assert victim.call("POST", "consent/", {"agree": True}).json()["state"] == "eligibility"
    attacker = Browser(live_server.url, study.slug)
    for attempt in (link, {**link, "session_ref": hex24()}, {**link, "token": "x" * 43}):
        response = attacker.open(**attempt)
        error = assert_api_error(response, code="session_in_progress", status=409)
        assert victim.token not in response.text and attacker.token is None
        assert error["details"]["state"] == "eligibility"
        assert "another browser" in error["message"]
    # Without the token the attacker cannot answer the victim's eligibility questions (or anything else).
    assert_api_error(attacker.call("POST", "eligibility/", {"answers": {"native": "no"}}, token="guess"),
                 code="not_found", status=404)
    # The victim's browser resumes (its HttpOnly resume cookie), and so does a client sending the token it kept.
    again = victim.open(**link)
    assert again.status_code == 200 and again.json()["token"] == victim.token
    assert "stylecrowd_resume" in created.headers["Set-Cookie"] and "HttpOnly" in created.headers["Set-Cookie"]
    other_device_with_token = Browser(live_server.url, study.slug)
    assert other_device_with_token.open(**link, token=victim.token).json()["token"] == victim.token
    assert victim.call("POST", "eligibility/", {"answers": {"native": "yes"}}).json()["state"] == "instructions"
    victim.call("POST", "start/", {})
    victim.answer_all()
    participant = Participant.objects.get(external_id=link["participant"])
    assert not participant.screened_out and not participant.excluded
    assert Batch.objects.filter(participant=participant).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_finished_participant_reopening_the_link_in_a_new_browser_sees_the_code_not_a_new_batch(live_server):
    study, study_id = _prolific_study("reopen")
    link = {"participant": hex24(), "platform": "prolific", "study_ref": study_id, "session_ref": hex24()}
    first = Browser(live_server.url, study.slug)
    assert first.open(**link).status_code == 201
    first.call("POST", "consent/", {"agree": True})
    first.call("POST", "eligibility/", {"answers": {"native": "yes"}})
    first.call("POST", "start/", {})
    first.answer_all()
    answers = Response.objects.count()
    new_browser = Browser(live_server.url, study.slug)
    response = new_browser.open(**link)  # the same Prolific link: same PID, STUDY_ID and SESSION_ID
    assert response.status_code == 200
    body = response.json()
    assert body["token"] is None and body["state"] == "completed"
    assert body["completion_code"] == "DONE123" and body["redirect_url"].endswith("cc=DONE123")
    assert "Set-Cookie" not in response.headers
    # Another Prolific session of the same id (someone who only knows the PID) gets neither code nor batch.
    stranger = Browser(live_server.url, study.slug)
    assert_api_error(stranger.open(**{**link, "session_ref": hex24()}), code="already_participated", status=409)
    assert Batch.objects.filter(participant__external_id=link["participant"]).count() == 1
    assert Response.objects.count() == answers


@pytest.mark.django_db(transaction=True)
def test_a_finished_participant_sees_the_code_on_the_page_in_a_new_browser(live_server):
    """The page itself (its script, a fresh browser context): the code, not the consent screen."""
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    study, study_id = _prolific_study("reopen-page")
    link = {"participant": hex24(), "platform": "prolific", "study_ref": study_id, "session_ref": hex24()}
    first = Browser(live_server.url, study.slug)
    first.open(**link)
    first.call("POST", "consent/", {"agree": True})
    first.call("POST", "eligibility/", {"answers": {"native": "yes"}})
    first.call("POST", "start/", {})
    first.answer_all()
    query = f"?PROLIFIC_PID={link['participant']}&STUDY_ID={study_id}&SESSION_ID={link['session_ref']}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_context().new_page()
            page.goto(f"{live_server.url}/s/{study.slug}/{query}")
            page.wait_for_selector('[data-screen="done"]:not([hidden])', timeout=15000)
            assert page.locator("#done-code").text_content() == "DONE123"
            assert page.locator('[data-screen="consent"]').is_hidden()
            # and the same link with another PID's session in progress elsewhere: told so, no consent screen
            victim = Browser(live_server.url, study.slug)
            other = {**link, "participant": hex24()}
            victim.open(**other)
            page = browser.new_context().new_page()
            page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={other['participant']}&STUDY_ID={study_id}"
                      f"&SESSION_ID={other['session_ref']}")
            page.wait_for_selector('[data-screen="end"]:not([hidden])', timeout=15000)
            assert "another browser" in page.locator("#end-message").text_content()
        finally:
            browser.close()
    assert Batch.objects.filter(study=study).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_declined_participant_is_shown_the_declined_ending_in_a_new_browser_without_a_token(live_server):
    study, study_id = _prolific_study("declined")
    link = {"participant": hex24(), "platform": "prolific", "study_ref": study_id, "session_ref": hex24()}
    first = Browser(live_server.url, study.slug)
    first.open(**link)
    assert first.call("POST", "consent/", {"agree": False}).json()["state"] == "declined"
    again = Browser(live_server.url, study.slug).open(**link)
    assert again.status_code == 200 and again.json()["state"] == "declined" and again.json()["token"] is None
    assert first.open(**link).json()["token"] == first.token  # the browser that declined: its session
    assert_api_error(Browser(live_server.url, study.slug).open(**{**link, "session_ref": hex24()}),
                 code="already_participated", status=409)
    assert Batch.objects.filter(participant__external_id=link["participant"]).count() == 1
