"""axe-core on every participant page (issue 23, point 4): 0 critical and 0 serious findings on each screen of each
study kind (quadruple and triple ordering with practice, Likert with a reference, ranking, rewrite), on every
ending, on the refused-link and unavailable pages, and on MTurk's preview page; the researcher's preview is checked
in test_preview.py. axe runs in Chromium against the live server (tests/annotation/accessibility.py)."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Batch, ItemKind, Reservation, Study
from annotation.services.practice import practice_items_set
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from tests.annotation.accessibility import assert_accessible

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import (
    COMPLETED,
    NEXT_ITEM_OR_END,
    answer_ordering_item,
    ensure_components,
    on_screen,
    quadruple_study,
)
from tests.annotation.test_views_preview import PRACTICE
from tests.factories import CorpusFactory, TaskInstanceFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
LINK = "?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID={pid}"


def _consent_to_instructions(page: Any) -> None:
    on_screen(page, "consent")
    assert_accessible(page, "consent")
    page.click("#consent-agree")
    page.wait_for_function("document.body.dataset.screen !== 'consent'")
    if page.evaluate("document.body.dataset.screen") != "instructions":
        on_screen(page, "eligibility")
        assert_accessible(page, "eligibility")
        page.get_by_label("yes").check()
        page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    assert_accessible(page, "instructions")


def test_every_screen_of_a_quadruple_study_with_practice(page: Any, live_server: Any) -> None:
    study = quadruple_study("a11y-quad", items=2, screening=1)
    practice_items_set(study=study, items=PRACTICE)
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="a11yquad"))
    _consent_to_instructions(page)
    page.click("#instructions-start")
    on_screen(page, "practice")
    assert_accessible(page, "practice")
    page.click('#practice-body label[data-choice="S1-S2"]')
    page.click("#practice-submit")
    page.wait_for_selector("#practice-feedback:not([hidden])")
    assert_accessible(page, "practice feedback")
    page.click("#practice-continue")
    on_screen(page, "item")
    assert page.is_visible(".pill.a2") and page.is_visible("#text-a2 .tag")  # white on the orange A2: checked
    assert_accessible(page, "a quadruple item, with the first-answer grace")
    page.click('label[data-choice="S2-S1"]')
    assert_accessible(page, "a quadruple item with a choice made")
    item_id = page.get_attribute("#item-body", "data-item-id")
    page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    while page.evaluate("document.body.dataset.screen") == "item":
        answer_ordering_item(page)
    on_screen(page, "done")
    assert_accessible(page, "the completed ending")
    assert page.js_errors == []


def test_a_triple_item(page: Any, live_server: Any) -> None:
    ensure_components()
    corpus = CorpusFactory()
    TaskInstanceFactory(corpus=corpus, setup=ItemKind.TRIPLE, anchor_2="", anchor_2_style=None)
    study = study_create(
        slug="a11y-triple", item_kind=ItemKind.TRIPLE, setup=ItemKind.TRIPLE, corpus=[corpus.name],
        eligibility_questions=[],
        settings=study_settings_build(items_per_batch=1, screening_per_batch=0, completion_code=COMPLETED),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="a11ytriple"))
    _consent_to_instructions(page)
    page.click("#instructions-start")
    on_screen(page, "item")
    assert_accessible(page, "a triple item")
    assert page.js_errors == []


def test_a_likert_item_with_its_reference(page: Any, live_server: Any) -> None:
    questions = [{"name": "style", "text": "How formal is the rewrite?", "min": 1, "max": 5,
                  "labels": {"1": "Not at all", "5": "Completely"}},
                 {"name": "meaning", "text": "How well is the meaning kept?", "min": -3, "max": 3}]
    study = study_create(
        slug="a11y-likert", item_kind=ItemKind.LIKERT, questions=questions,
        items=[{"id": "l1", "source": "gonna be late lol", "rewrite": "I will be late.",
                                 "reference": "I am going to be late.", "target_style": "formal"}],
        eligibility_questions=[],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="a11ylikert"))
    _consent_to_instructions(page)
    page.click("#instructions-start")
    on_screen(page, "item")
    assert page.is_visible("#text-reference .tag")  # white on the orange "Reference" tag: checked
    assert_accessible(page, "a Likert item")
    page.keyboard.press("4")
    assert_accessible(page, "a Likert item half rated")
    assert page.js_errors == []


def test_a_ranking_item(page: Any, live_server: Any) -> None:
    outputs = [{"id": "o1", "text": "I will be late."}, {"id": "o2", "text": "I am gonna be late."}]
    study = study_create(
        slug="a11y-ranking", item_kind=ItemKind.RANKING,
        items=[{"id": "r1", "source": "gonna be late lol", "outputs": outputs}], eligibility_questions=[],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="a11yrank"))
    _consent_to_instructions(page)
    page.click("#instructions-start")
    on_screen(page, "item")
    assert_accessible(page, "a ranking item")
    page.click("ol.ranking li:last-child .up")
    assert_accessible(page, "a ranking item after a move")
    assert page.js_errors == []


@pytest.mark.parametrize("screen", ["page", "phone_page"])
def test_a_rewrite_item(screen: str, live_server: Any, request: pytest.FixtureRequest) -> None:
    page = request.getfixturevalue(screen)
    study = study_create(
        slug=f"a11y-rewrite-{screen}", item_kind=ItemKind.REWRITE, rewrite_min_length=20,
        items=[{"id": "w1", "source": "gonna be late lol",
                                                        "target_style": "formal"}],
        eligibility_questions=[],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="a11ywriter"))
    _consent_to_instructions(page)  # the consent screen names the writing telemetry
    page.click("#instructions-start")
    on_screen(page, "item")
    assert_accessible(page, f"a rewrite item ({screen})")
    page.fill("#rewrite-text", "short")
    assert_accessible(page, f"a rewrite item with a too-short text ({screen})")
    assert page.js_errors == []


def test_the_endings_without_a_code(page: Any, live_server: Any) -> None:
    study = quadruple_study("a11y-endings", items=2, screening=0)
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="decliner"))
    on_screen(page, "consent")
    page.click("#consent-decline")
    on_screen(page, "end")
    assert_accessible(page, "the declined ending")
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="screened"))
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("no").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "end")
    assert_accessible(page, "the screened-out ending")
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="slowone"))
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("yes").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    past = timezone.now() - timedelta(minutes=1)
    Batch.objects.filter(participant__external_id="slowone").update(expires_at=past)
    Reservation.objects.filter(participant__external_id="slowone").update(expires_at=past)
    item_id = page.get_attribute("#item-body", "data-item-id")
    page.click('label[data-choice="S1-S2"]')
    page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "end")
    assert_accessible(page, "the timed-out ending")
    assert page.js_errors == []


def test_the_pages_that_open_no_session(page: Any, live_server: Any) -> None:
    study = quadruple_study("a11y-pages", items=1, screening=0, platform="prolific", allow_anonymous=False)
    page.goto(f"{live_server.url}/s/{study.slug}/")  # an open link to a Prolific study
    assert page.inner_text("h1") == "This link cannot open the study"
    assert_accessible(page, "the refused-link page")
    page.goto(f"{live_server.url}/s/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H")
    assert_accessible(page, "MTurk's preview page")
    page.goto(f"{live_server.url}/s/no-such-study/")
    assert_accessible(page, "the missing-study page")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    page.goto(f"{live_server.url}/s/{study.slug}/")
    assert_accessible(page, "the closed-study page")


def test_the_error_screen(page: Any, live_server: Any) -> None:
    study = quadruple_study("a11y-error", items=1, screening=0, eligibility_questions=[])
    page.route("**/api/v1/studies/*/sessions/", lambda route: route.abort("internetdisconnected"))
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="offline"))
    on_screen(page, "error")
    assert "could not reach the server" in page.inner_text("#error-message")
    assert_accessible(page, "the error screen")
