"""The annotator on a phone (390×844, touch) in Chromium: choices and Next reachable without scrolling on every
item, the whole item on screen for typical short STEL items, keyboard tips only where there is a keyboard.

Screenshots of every phone item go to test-artifacts/screenshots/ (the CI artefacts folder).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import selectors
from annotation.models import ItemKind, Response, Study
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.conftest_browser import PHONE, TIMEOUT_MS, Shots
from tests.annotation.test_views_browser import (
    NEXT_ITEM_OR_END,
    current_item_id,
    ensure_components,
    on_screen,
    quadruple_study,
)
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

FORMALITY = REPO_ROOT / "fixtures" / "corpora"


@pytest.fixture
def touch_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:  # noqa: F811
    """An iPhone-sized touch screen: 390×844 CSS pixels, mobile, touch, no mouse."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    yield page
    context.close()


class ViewportShots(Shots):
    """What the participant sees: the 390×844 screen as it is, not the whole page."""

    def __call__(self, page: Any, screen: str) -> Path:
        self.count += 1
        path = self.directory / f"{self.prefix}-{self.count:02d}-{screen}.png"
        page.screenshot(path=str(path), full_page=False)
        self.saved.append(path)
        return path


@pytest.fixture
def screen_shots(shots: Shots) -> ViewportShots:  # noqa: F811
    return ViewportShots(shots.directory, "phone-" + shots.prefix)


def formality_study(slug: str, *, setup: str = ItemKind.QUADRUPLE, items: int = 4) -> Study:
    """The demo's formal/informal sample (GYAFC-like sentences, as STEL's formality items) as a study."""
    ensure_components()
    corpus, _ = corpus_import(name=f"formality-{slug}", component="formality", import_format="aligned",
                              paths=[FORMALITY / "formality_informal.txt", FORMALITY / "formality_formal.txt"])
    instances_generate(corpus=corpus, setup=setup, seed=1)
    return study_create(
        slug=slug, item_kind=setup, setup=setup, corpus=[corpus.name], count=items, seed=3, eligibility_questions=[],
        settings=study_settings_build(items_per_batch=items, screening_per_batch=0, annotators_per_item=3),
    )


def box(page: Any, selector: str) -> dict[str, float]:
    element = page.query_selector(selector)
    assert element is not None, selector
    found = element.bounding_box()
    assert found is not None, f"{selector} is not displayed"
    return found


def assert_in_viewport(page: Any, selector: str) -> None:
    """Every match of `selector` lies entirely inside the 390×844 viewport as it is, without scrolling."""
    assert page.evaluate("window.scrollY") == 0
    for element in page.query_selector_all(selector):
        found = element.bounding_box()
        assert found is not None, f"{selector} is not displayed"
        assert found["x"] >= 0 and found["x"] + found["width"] <= PHONE["width"] + 0.5, (selector, found)
        assert found["y"] >= 0 and found["y"] + found["height"] <= PHONE["height"] + 0.5, (selector, found)


def item_fits_whole(page: Any) -> bool:
    """All four texts end above the answer bar, and the page needs no scrolling at all."""
    bar_top = box(page, "#answer-bar")["y"]
    texts_bottom = max(b["y"] + b["height"] for b in (box(page, f"#text-{t}") for t in ("a1", "a2", "s1", "s2")))
    return texts_bottom <= bar_top and page.evaluate("document.documentElement.scrollHeight") <= PHONE["height"]


def start(page: Any, live_server: Any, study: Study, pid: str) -> None:
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=STU1&SESSION_ID=SES1")
    on_screen(page, "consent")
    page.tap("#consent-agree")
    on_screen(page, "instructions")


def answer_by_tapping(page: Any) -> None:
    item_id = current_item_id(page)
    page.tap(f'label[data-choice="{selectors.reservation_expected_answer(public_id=item_id)}"]')
    assert_in_viewport(page, "#item-submit")  # choosing did not scroll the page either
    page.tap("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)


def test_long_stel_items_keep_choices_and_next_on_screen(touch_page: Any, live_server: Any, screen_shots: Any) -> None:
    shots = screen_shots
    """STEL's contraction quadruples (Wikipedia sentences, median 185 characters): the texts scroll, the answer bar
    with both choices and Next stays at the bottom of the screen."""
    page = touch_page
    study = quadruple_study("phone-long", items=4, screening=2, eligibility_questions=[])
    start(page, live_server, study, "5f1c0ffee0ddba11c0ffee01")
    assert not page.is_visible("#instructions-hint")  # keyboard tips: none on a touch screen
    shots(page, "instructions")
    page.tap("#instructions-start")
    on_screen(page, "item")
    total = study.items_per_batch + study.screening_per_batch
    for position in range(1, total + 1):
        assert page.inner_text("#progress-text") == f"Item {position} of {total}"
        assert_in_viewport(page, "label[data-choice]")
        assert_in_viewport(page, "#item-submit")
        assert len(page.query_selector_all("label[data-choice]")) == 2
        for selector in ("label[data-choice]", "#item-submit"):  # still comfortable to tap
            for element in page.query_selector_all(selector):
                assert element.bounding_box()["height"] >= 44 and element.bounding_box()["width"] >= 44
        assert not page.is_visible("#item-hint") and not page.is_visible(".choice .key")
        shots(page, f"item-{position}")
        # scrolled to the end, every text can be read above the bar
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        s2_bottom = box(page, "#text-s2")["y"] + box(page, "#text-s2")["height"]
        assert s2_bottom <= box(page, "#answer-bar")["y"] + 1
        page.evaluate("window.scrollTo(0, 0)")
        answer_by_tapping(page)
    on_screen(page, "done")
    shots(page, "done")
    assert Response.objects.filter(participant__study=study, is_valid=True).count() == total
    assert len(shots.saved) == total + 2 and all(path.stat().st_size > 10_000 for path in shots.saved)
    assert page.js_errors == []


def test_typical_short_items_fit_whole_without_scrolling(touch_page: Any, live_server: Any, screen_shots: Any) -> None:
    shots = screen_shots
    """Formal/informal sentences of GYAFC's length (the demo sample; median 49 characters): the four sentences,
    both choices and Next all fit on the screen at once."""
    page = touch_page
    study = formality_study("phone-short", items=5)
    start(page, live_server, study, "5f1c0ffee0ddba11c0ffee02")
    page.tap("#instructions-start")
    on_screen(page, "item")
    for position in range(1, 6):
        assert_in_viewport(page, "label[data-choice]")
        assert_in_viewport(page, "#item-submit")
        for text in ("a1", "a2", "s1", "s2"):
            assert_in_viewport(page, f"#text-{text}")
        assert item_fits_whole(page), f"item {position} needs scrolling"
        shots(page, f"item-{position}")
        answer_by_tapping(page)
    on_screen(page, "done")
    assert page.js_errors == []


def test_triple_items_fit_on_a_phone(touch_page: Any, live_server: Any, screen_shots: Any) -> None:
    shots = screen_shots
    page = touch_page
    study = formality_study("phone-triple", setup=ItemKind.TRIPLE, items=3)
    start(page, live_server, study, "5f1c0ffee0ddba11c0ffee03")
    page.tap("#instructions-start")
    on_screen(page, "item")
    for position in range(1, 4):
        for selector in ("#text-a1", "#text-s1", "#text-s2", "label[data-choice]", "#item-submit"):
            assert_in_viewport(page, selector)
        shots(page, f"item-{position}")
        answer_by_tapping(page)
    on_screen(page, "done")
    assert page.js_errors == []


def test_keyboard_tips_show_on_a_desktop_and_after_a_key_press_on_a_touch_screen(
    page: Any, touch_page: Any, live_server: Any, screen_shots: Any,
) -> None:
    shots = screen_shots
    study = formality_study("phone-tips", items=2)
    # desktop (mouse and keyboard): tips on the instructions and under every item, number badges on the choices
    start_desktop = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=5f1c0ffee0ddba11c0ffee04&STUDY_ID=S&SESSION_ID=S"
    page.goto(start_desktop)
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    assert page.is_visible("#instructions-hint") and "Enter" in page.inner_text("#instructions-hint")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert page.is_visible("#item-hint") and page.is_visible(".choice .key")
    shots(page, "desktop-item")
    # touch: none of them, until the participant presses a key on an attached keyboard
    start(touch_page, live_server, study, "5f1c0ffee0ddba11c0ffee05")
    assert not touch_page.is_visible("#instructions-hint")
    touch_page.tap("#instructions-start")
    on_screen(touch_page, "item")
    assert not touch_page.is_visible("#item-hint") and not touch_page.is_visible(".choice .key")
    touch_page.keyboard.press("1")  # a keyboard after all: the key chose the first answer, and tips appear
    assert touch_page.is_checked("#choice-0")
    assert touch_page.is_visible("#item-hint") and touch_page.is_visible(".choice .key")
    shots(touch_page, "touch-after-key")
    assert page.js_errors == [] and touch_page.js_errors == []
