"""The writer's page and the review queue in Chromium: on a desktop and a 390×844 phone the
persona questionnaire comes first, an earlier rejection's reason is shown, a copy of the source and a rewrite
outside the length limits cannot be sent; reviewers decide rewrites with the keyboard alone, and the seconds per
decision are measured (docs/benchmarks.md)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from annotation.models import Participant, Response, RewriteReview
from annotation.services.review import review_decide
from annotation.services.rewrites import rewrite_study_create
from core.roles import roles_sync

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.accessibility import assert_accessible
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.helpers import run_participant, settings_pop
from tests.annotation.test_views_browser import NEXT_ITEM_OR_END, current_item_id, on_screen

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
SOURCE = "hey r u free on friday for the thing lol"


def _study(slug: str, **extra: Any) -> Any:
    study, _ = rewrite_study_create(
        slug=slug, sources=[("s1", SOURCE), ("s2", "gonna be late again for the meeting today sorry")],
        target_style="formal", min_length=20, max_length=80, eligibility_questions=[], filters={"min_words": 0},
        settings=settings_pop(extra, annotators_per_item=2, items_per_batch=2, max_batches=1), **extra)
    return study


@pytest.mark.parametrize("screen", ["page", "phone_page"])
def test_writer_page_persona_feedback_copy_and_length(screen: str, live_server: Any, shots: Any,
                                                      request: pytest.FixtureRequest) -> None:
    page = request.getfixturevalue(screen)
    refused: list[int] = []
    page.on("response", lambda r: refused.append(r.status) if "/answers/" in r.url and r.status >= 400 else None)
    _study("earlier")
    run_participant(slug="earlier", pid="writer01", answer_for=lambda item, _: "Are you free on Friday, dear sir?")
    earlier = Response.objects.filter(participant__external_id="writer01").first()
    review_decide(response_id=earlier.pk, decision="reject", reason="meaning", reviewer=None)
    study = _study("writing", persona=["gender", "age"])
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=writer01&STUDY_ID=S&SESSION_ID=W")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    page.get_by_label("female").check()
    page.get_by_label("25-34").check()
    shots(page, f"{screen}-persona")
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    feedback = page.inner_text("#rewrite-feedback")
    assert "meaning changed" in feedback and "Are you free on Friday, dear sir?" in feedback
    assert "Examples:" in page.inner_text("[data-screen=instructions]")
    shots(page, f"{screen}-feedback")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert Participant.objects.get(study=study, external_id="writer01").persona == {"gender": "female",
                                                                                    "age": "25-34"}
    source = page.inner_text("#text-source p")
    page.fill("#rewrite-text", source.upper() + "!!")
    assert "identical to the original" in page.inner_text("#rewrite-counter")
    assert page.is_disabled("#item-submit")
    page.focus("#rewrite-text")
    page.keyboard.press("Control+Enter")  # refused before submit: nothing is sent
    shots(page, f"{screen}-copy-refused")
    page.fill("#rewrite-text", "Would you be available " + "at some point " * 6 + "on Friday?")
    assert "at most 80 allowed" in page.inner_text("#rewrite-counter") and page.is_disabled("#item-submit")
    page.fill("#rewrite-text", "Free Friday?")
    assert "of at least 20 characters" in page.inner_text("#rewrite-counter") and page.is_disabled("#item-submit")
    assert not Response.objects.filter(study=study).exists() and refused == []  # refused in the browser
    for _ in range(2):
        item_id = current_item_id(page)
        page.fill("#rewrite-text", "Would you be available on Friday for the occasion?")
        page.click("#item-submit")
        page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    assert Response.objects.filter(study=study, participant__external_id="writer01").count() == 2
    assert page.js_errors == []


def test_review_queue_is_keyboard_driven_and_timed(page: Any, live_server: Any, shots: Any,
                                                    artifacts_dir: Path) -> None:
    _study("queue")
    for n in range(2):  # two writers × two sources (k = 2): four rewrites to review
        run_participant(slug="queue", pid=f"w{n}",
                        answer_for=lambda item, _, n=n: f"Writer {n} asks politely whether you are available.")
    user = User.objects.create_user("reviewer", password="pw-review-1", is_staff=True)
    roles_sync()  # the reviewer group `create_roles` makes is enough to review
    user.groups.add(Group.objects.get(name="reviewer"))
    page.goto(f"{live_server.url}/admin/login/?next=/admin/annotation/rewritereview/queue/")
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", "pw-review-1")
    page.click("input[type=submit]")
    page.wait_for_selector(".rq-row.current")
    shots(page, "queue")
    assert page.locator("h1").count() == 1  # the title once
    assert not page.locator("#rq-error").is_visible()  # no empty red box before any error
    rows = page.locator(".rq-row")
    assert rows.count() == 4
    ids = [rows.nth(i).get_attribute("data-response") for i in range(4)]

    def done(count: int) -> None:
        page.wait_for_function("n => document.querySelectorAll('.rq-row.done').length === n", arg=count)

    started = time.perf_counter()
    page.keyboard.press("a")  # accept the first
    done(1)
    page.keyboard.press("r")
    page.keyboard.press("3")  # not in the target style
    done(2)
    page.keyboard.press("k")  # back up: the decided rows stay decided
    page.keyboard.press("j")
    page.keyboard.press("r")
    page.keyboard.press("5")  # other: a text, Enter sends
    page.keyboard.type("adds a greeting")
    page.keyboard.press("Enter")
    done(3)
    page.keyboard.press("a")
    done(4)
    elapsed = time.perf_counter() - started
    shots(page, "queue-decided")
    reviews = {str(r.response_id): r for r in RewriteReview.objects.select_related("reviewer")}
    assert [reviews[i].status for i in ids] == ["accepted", "rejected", "rejected", "accepted"]
    assert (reviews[ids[1]].reason, reviews[ids[2]].reason, reviews[ids[2]].reason_text) == ("style", "other",
                                                                                             "adds a greeting")
    assert {r.reviewer.username for r in reviews.values()} == {"reviewer"}
    assert "0 pending" in page.inner_text("#rq-count")
    per_decision = elapsed / 4
    in_page = page.evaluate("window.reviewTimings")
    (artifacts_dir / "review_speed.json").write_text(json.dumps(
        {"decisions": 4, "seconds_per_decision": round(per_decision, 3),
         "in_page_seconds": [round(s, 3) for s in in_page]}))
    print(f"review queue: {per_decision:.3f} s per keyboard decision (in page: {in_page})")
    assert per_decision < 5
    assert page.js_errors == []


def _reviewer_on_the_queue(page: Any, live_server: Any, slug: str) -> None:
    _study(slug)
    for n in range(2):  # two writers × two sources (k = 2): four rewrites to review
        run_participant(slug=slug, pid=f"w{n}",
                        answer_for=lambda item, _, n=n: f"Writer {n} asks politely whether you are available.")
    user = User.objects.create_user("reviewer", password="pw-review-1", is_staff=True)
    roles_sync()
    user.groups.add(Group.objects.get(name="reviewer"))
    page.goto(f"{live_server.url}/admin/login/?next=/admin/annotation/rewritereview/queue/")
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", "pw-review-1")
    page.click("input[type=submit]")
    page.wait_for_selector(".rq-row.current")


def test_the_current_card_is_visible_and_the_first_j_keeps_it(page: Any, live_server: Any) -> None:
    _reviewer_on_the_queue(page, live_server, "queue-focus")
    rows = page.locator(".rq-row")
    ids = [rows.nth(i).get_attribute("data-response") for i in range(rows.count())]
    current = page.locator(".rq-row.current")
    assert current.get_attribute("data-response") == ids[0] and current.get_attribute("aria-current") == "true"
    assert page.evaluate("document.activeElement.dataset.response") == ids[0]  # focused, not only coloured
    assert page.evaluate("getComputedStyle(document.querySelector('.rq-row.current')).outlineStyle") == "solid"
    assert current.locator(".rq-here").is_visible()
    page.keyboard.press("j")  # the card that looks selected stays current
    assert page.locator(".rq-row.current").get_attribute("data-response") == ids[0]
    page.keyboard.press("j")
    assert page.locator(".rq-row.current").get_attribute("data-response") == ids[1]
    page.keyboard.press("a")  # acts on the card shown current
    page.wait_for_function("() => document.querySelectorAll('.rq-row.done').length === 1")
    assert RewriteReview.objects.get().response_id == int(ids[1])
    assert_accessible(page, "the review queue")
    assert page.js_errors == []


def test_review_queue_accept_and_reject_by_mouse_and_touch(browser: Any, live_server: Any, shots: Any) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 1366}, has_touch=True)  # a tablet
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        _reviewer_on_the_queue(page, live_server, "queue-touch")
        rows = page.locator(".rq-row")
        ids = [rows.nth(i).get_attribute("data-response") for i in range(rows.count())]

        def done(count: int) -> None:
            page.wait_for_function("n => document.querySelectorAll('.rq-row.done').length === n", arg=count)

        rows.nth(2).locator(".rq-accept").click()  # a mouse, on a card that is not the current one
        done(1)
        rows.nth(0).locator(".rq-accept").tap()  # a finger
        done(2)
        rows.nth(1).locator(".rq-reject").tap()
        assert rows.nth(1).locator("#rq-reasons").is_visible()  # the reasons open under the card tapped
        shots(page, "queue-touch-reasons")
        page.locator(".rq-reason[data-code=style]").tap()
        done(3)
        rows.nth(3).locator(".rq-reject").click()
        page.locator(".rq-reason[data-code=other]").click()
        page.fill("#rq-other", "adds a greeting")
        page.press("#rq-other", "Enter")
        done(4)
        reviews = {str(r.response_id): r for r in RewriteReview.objects.all()}
        assert [reviews[i].status for i in ids] == ["accepted", "rejected", "accepted", "rejected"]
        assert (reviews[ids[1]].reason, reviews[ids[3]].reason, reviews[ids[3]].reason_text) == (
            "style", "other", "adds a greeting")
        assert not rows.nth(0).locator(".rq-accept").is_visible()  # a decided card offers no buttons
        assert_accessible(page, "the review queue after touch decisions")
        assert errors == []
    finally:
        context.close()
