"""Writing telemetry in Chromium: typing, deleting, pasting (a piece of the original and text from elsewhere) and
switching to another tab produce the expected counts, stored with the answer and consistent with the server's
clock; on a 390×844 phone the rewrite page still works and its Next stays on screen."""
from __future__ import annotations

import time
from typing import Any

import pytest

from annotation.models import Response
from annotation.services.rewrites import rewrite_study_create
from annotation.services.study_settings import study_settings_build

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import NEXT_ITEM_OR_END, current_item_id, on_screen

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
SOURCE = "hey r u free on friday for the thing lol"


def _to_item(page: Any, url: str, slug: str, pid: str) -> None:
    rewrite_study_create(
        slug=slug, sources=[("s1", SOURCE)], target_style="formal", min_length=20, max_length=200,
        eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(annotators_per_item=2, items_per_batch=1, max_batches=1),
    )
    page.goto(f"{url}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=T")
    on_screen(page, "consent")
    assert "never records which keys you press" in page.inner_text("#telemetry-notice")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")


def _paste(page: Any, text: str) -> None:
    page.evaluate("text => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+V")


def test_typing_pasting_and_switching_tabs_are_counted(page: Any, live_server: Any, shots: Any) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    # Headless Chromium lets every tab keep the focus; without that emulation a tab switch blurs the page as a
    # desktop browser does.
    _to_item(page, live_server.url, "tel-desktop", "typist01")
    page.context.new_cdp_session(page).send("Emulation.setFocusEmulationEnabled", {"enabled": False})
    page.bring_to_front()
    page.focus("#rewrite-text")
    page.keyboard.type("Are you frea", delay=40)
    page.keyboard.press("Backspace")
    page.keyboard.type("e ", delay=40)
    _paste(page, "on friday")  # a piece of the original
    other = page.context.new_page()  # to another tab for a while, as to a chatbot
    other.goto(f"{live_server.url}/api/v1/ping/")
    other.bring_to_front()
    time.sleep(1.5)
    page.bring_to_front()
    page.focus("#rewrite-text")
    outside = " for the occasion, dear colleague?"
    _paste(page, outside)  # text from elsewhere, right after coming back
    other.close()
    text = page.input_value("#rewrite-text")
    assert text == "Are you free on friday for the occasion, dear colleague?"
    shots(page, "telemetry-typed-and-pasted")
    item_id = current_item_id(page)
    page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    row = Response.objects.get(study__slug="tel-desktop")
    assert row.answer == text and row.telemetry_status == "consistent", row.telemetry
    t = row.telemetry["page"]
    assert (t["keystrokes"], t["typed_chars"], t["deletions"], t["deleted_chars"]) == (15, 14, 1, 1)
    assert t["paste_count"] == 2 and t["pasted_chars"] == len("on friday") + len(outside)
    assert [(p["chars"], p["matched_source"]) for p in t["pastes"]] == [(9, True), (len(outside), False)]
    away = max(t["focus_losses"], key=lambda f: f["ms"])
    assert t["focus_loss_count"] >= 1 and away["ms"] >= 1400 and away["next_insert_chars"] == len(outside)
    assert 0 < t["first_key_ms"] < t["submit_ms"] and 0 < t["active_ms"] < t["submit_ms"]
    assert t["submit_ms"] / 1000 <= row.server_seconds + 1
    assert "keys" not in t and text not in str(t)  # counts and durations only
    assert page.js_errors == []


def test_the_phone_layout_still_works_with_telemetry(phone_page: Any, live_server: Any, shots: Any) -> None:
    page = phone_page
    _to_item(page, live_server.url, "tel-phone", "phone01")
    page.tap("#rewrite-text")
    written = "Are you available on Friday for the event?"
    page.keyboard.type(written, delay=90)  # a person's speed (the server bounds the typing rate)
    box = page.locator("#item-submit").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844  # Next is on screen without scrolling
    shots(page, "telemetry-phone")
    item_id = current_item_id(page)
    page.tap("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    row = Response.objects.get(study__slug="tel-phone")
    assert row.answer == written and row.telemetry_status == "consistent", row.telemetry
    t = row.telemetry["page"]
    assert t["typed_chars"] == len(written) and t["paste_count"] == 0 and t["deletions"] == 0
    assert page.js_errors == []


def test_text_typed_or_pasted_over_a_selection_counts_as_deleted(page: Any, live_server: Any) -> None:
    """The text box holds exactly typed + pasted - deleted characters, so the server's text-length bound holds for
    a writer who selects a draft and types over it, or pastes over a word (issue 30)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    _to_item(page, live_server.url, "tel-select", "typist02")
    page.focus("#rewrite-text")
    page.keyboard.type("A first draft that goes away entirely.", delay=90)  # a person's speed
    page.keyboard.press("Control+A")
    page.keyboard.type("Would you be free on Friday", delay=90)  # the first key replaces the whole draft
    for _ in range(6):
        page.keyboard.press("Shift+ArrowLeft")
    _paste(page, "Saturday for the event?")  # over "Friday"
    text = page.input_value("#rewrite-text")
    assert text == "Would you be free on Saturday for the event?"
    item_id = current_item_id(page)
    page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    row = Response.objects.get(study__slug="tel-select")
    t = row.telemetry["page"]
    assert t["deleted_chars"] == len("A first draft that goes away entirely.") + len("Friday")
    assert t["typed_chars"] + t["pasted_chars"] - t["deleted_chars"] == len(text)
    assert row.telemetry_status == "consistent", row.telemetry["problems"]
    assert page.js_errors == []
