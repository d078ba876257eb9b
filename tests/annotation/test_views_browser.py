"""End-to-end: a participant in headless Chromium goes through `/s/<slug>/` against the live server and PostgreSQL.

Correct answers are looked up server-side by the opaque item id the page carries (`data-item-id`), exactly as a
simulated participant would need to; the page itself never receives them.
"""
from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from annotation import selectors
from annotation.models import Batch, ItemKind, Participant, Reservation, Response, Study, StudyItem
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from annotation.views import mturk_submit_url, participant_from_query, prose_html
from tasks.models import ScreeningQuestion, StyleComponent
from tasks.services.imports import corpus_import

# The browser fixtures (one Chromium per module, a context per test, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.conftest_browser import PHONE
from tests.annotation.helpers import settings_pop
from tests.factories import CorpusFactory, ScreeningQuestionFactory, StudyFactory, TaskInstanceFactory

# live_server serves from another thread, so the data must be committed; tests/conftest.py re-creates the
# migrations' rows (the STEL components) that each transactional flush wipes.
pytestmark = pytest.mark.django_db(transaction=True)
browser_test = pytest.mark.browser

COMPLETED = "C0MPL3TE"
SCREENED_OUT = "SCR33N0UT"
REDIRECT = "https://app.prolific.com/submissions/complete?cc={code}"
ELIGIBILITY = [
    {"name": "native", "text": "Is English your native language?", "choices": ["yes", "no"], "accept": ["yes"]},
]
STEL_CONTRACTION = settings.SHARED_DATA_DIR / "stel" / "quad_questions_char_contraction.tsv"


NEXT_ITEM_OR_END = (
    "id => document.body.dataset.screen !== 'item' || document.querySelector('#item-body').dataset.itemId !== id"
)


STEL_COMPONENTS = {
    "formality": ("informal", "formal", "dimension"),
    "simplicity": ("complex", "simple", "dimension"),
    "contraction": ("expanded", "contracted", "characteristic"),
    "nbr_substitution": ("plain", "substituted", "characteristic"),
}


def ensure_components() -> None:
    """The data migration's component rows; a `--reuse-db` run after a transactional flush no longer has them."""
    for name, (label_1, label_2, kind) in STEL_COMPONENTS.items():
        StyleComponent.objects.get_or_create(name=name, defaults={"label_1": label_1, "label_2": label_2, "kind": kind})


def quadruple_study(slug: str, *, items: int = 4, screening: int = 2, **fields: Any) -> Study:
    """A quadruple study over STEL's published contraction instances, with STEL's screening questions.

    Built the way a researcher builds one: the STEL TSV through the tasks importer, the study through
    `study_create` (so the instructions are the project's own quadruple task description and example).
    """
    ensure_components()
    corpus_name = f"stel-contraction-{slug}"
    corpus_import(name=corpus_name, component=None, import_format="stel", paths=[STEL_CONTRACTION])
    if not ScreeningQuestion.objects.exists():
        call_command("loaddata", "screening_questions", verbosity=0)
    options: dict[str, Any] = dict(
        title="Which sentences share a style?", setup="quadruple", corpus=[corpus_name], count=items, seed=7,
        items_per_batch=items, screening_per_batch=screening, annotators_per_item=5, max_batches=1,
        consent_text="You will judge the style of short English sentences.\n\nYour answers are used for research.",
        eligibility_questions=ELIGIBILITY, completion_code=COMPLETED, screened_out_code=SCREENED_OUT,
        redirect_url=REDIRECT,
    )
    given = {**options, **fields}
    return study_create(slug=slug, item_kind=ItemKind.QUADRUPLE, settings=settings_pop(given), **given)


def on_screen(page: Any, name: str) -> None:
    page.wait_for_selector(f'body[data-screen="{name}"]')


def current_item_id(page: Any) -> str:
    return page.get_attribute("#item-body", "data-item-id")


def submit_and_wait(page: Any, item_id: str, *, key: str | None = None) -> None:
    """Submit the item on screen and wait until the next item (or the end) replaces it."""
    if key:
        page.keyboard.press(key)
    else:
        page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)


def answer_ordering_item(page: Any, *, fail_screening: bool = False) -> tuple[str, str, bool]:
    """Click the expected answer (or, for a screening question when asked to, the other one) and go on."""
    item_id = current_item_id(page)
    expected = selectors.reservation_expected_answer(public_id=item_id)
    is_screening = selectors.reservation_is_screening(public_id=item_id)
    assert expected in {"S1-S2", "S2-S1"}
    answer = expected
    if fail_screening and is_screening:
        answer = "S1-S2" if expected == "S2-S1" else "S2-S1"
    assert page.is_disabled("#item-submit"), "Next must wait for a choice"
    page.click(f'label[data-choice="{answer}"]')
    submit_and_wait(page, item_id)
    return item_id, answer, is_screening


def start_from_link(page: Any, live_server: Any, study: Study, query: str, shots: Any | None = None) -> None:
    page.goto(f"{live_server.url}/s/{study.slug}/{query}")
    on_screen(page, "consent")
    assert "judge the style of short English sentences" in page.inner_text("[data-screen=consent]")
    if shots:
        shots(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    if shots:
        shots(page, "eligibility")


def pass_eligibility_and_instructions(page: Any, shots: Any | None = None) -> None:
    page.get_by_label("yes").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    text = page.inner_text("[data-screen=instructions]")
    assert "Example" in text and "Answer: S2-S1" in text  # the project's task description with its example
    if shots:
        shots(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")


@browser_test
def test_prolific_participant_completes_a_full_batch(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-full")
    served: list[Any] = []  # every `next` and `answers` body the page received: what the browser could ever know
    page.on("response", lambda response: served.append(response)
            if response.url.endswith(("/next/", "/answers/")) else None)
    start_from_link(page, live_server, study, "?PROLIFIC_PID=5f1cPID00001&STUDY_ID=STU1&SESSION_ID=SES1", shots)
    pass_eligibility_and_instructions(page, shots)

    total = study.items_per_batch + study.screening_per_batch
    seen_screening = 0
    for position in range(1, total + 1):
        assert page.inner_text("#progress-text") == f"Item {position} of {total}"
        assert page.get_attribute("#progress-bar", "aria-valuenow") == str(position - 1)
        # All four texts and both pairings are on screen; nothing on it says which answer is right.
        for text_id in ("#text-a1", "#text-a2", "#text-s1", "#text-s2"):
            assert page.inner_text(text_id).strip()
        assert sorted(page.eval_on_selector("#item-body", "el => Object.keys(el.dataset)")) == ["itemId", "kind"]
        if position == 1:  # the first-answer grace is shown, counting down, then the batch's 30-minute limit
            assert page.inner_text("#time-left") in {f"{n} min to give your first answer" for n in (4, 5)}
            assert page.is_visible("#grace-note")
        if position == 2:
            assert page.inner_text("#time-left") in {"30 min left", "29 min left"}
            assert not page.is_visible("#grace-note")
        if position in (1, total):
            shots(page, f"item-{position}")
        _, _, is_screening = answer_ordering_item(page)
        seen_screening += is_screening
    on_screen(page, "done")
    shots(page, "done")

    assert seen_screening == study.screening_per_batch
    # One request per item: `next` once to start, then every answer's response carries the next item.
    assert [r.request.method for r in served].count("GET") == 1
    assert len([r for r in served if r.request.method == "POST"]) == total
    bodies = [response.json() for response in served]
    items = [body["item"] for body in bodies if body.get("item")]
    items += [body["next"]["item"] for body in bodies if (body.get("next") or {}).get("item")]
    assert len({item["id"] for item in items}) == total
    for item in items:  # texts and choices only: nothing says which answer is right or which item screens
        assert set(item) == {"id", "kind", "position", "texts", "choices"}
        assert set(item["texts"]) == {"anchor_1", "anchor_2", "sentence_1", "sentence_2"}
    assert page.inner_text("#done-code") == COMPLETED
    assert page.get_attribute("#done-redirect", "href") == REDIRECT.format(code=COMPLETED)
    participant = Participant.objects.get(study=study, external_id="5f1cPID00001")
    assert participant.platform == Participant.Platform.PROLIFIC
    assert not participant.excluded and not participant.screened_out
    responses = Response.objects.filter(participant=participant)
    assert responses.count() == total
    assert all(response.is_valid for response in responses)
    assert responses.filter(is_screening=True, is_correct=True).count() == study.screening_per_batch
    assert responses.filter(is_screening=False, is_correct=True).count() == study.items_per_batch
    assert page.js_errors == []


@browser_test
def test_participant_failing_screening_is_excluded_but_ends_politely(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-screen-fail")
    start_from_link(page, live_server, study, "?PROLIFIC_PID=careless01&STUDY_ID=STU1&SESSION_ID=SES2")
    pass_eligibility_and_instructions(page)
    total = study.items_per_batch + study.screening_per_batch
    failed = 0
    for _ in range(total):
        _, _, is_screening = answer_ordering_item(page, fail_screening=True)
        failed += is_screening
    on_screen(page, "done")
    shots(page, "done-after-failed-screening")

    assert failed == study.screening_per_batch
    # The batch ends with the ordinary code and no accusation; the exclusion is the researcher's business.
    assert page.inner_text("#done-code") == COMPLETED
    assert "Thank you" in page.inner_text("#done-heading")
    participant = Participant.objects.get(study=study, external_id="careless01")
    assert participant.excluded
    responses = Response.objects.filter(participant=participant)
    assert responses.count() == total
    assert not responses.filter(is_valid=True).exists()
    assert responses.filter(is_screening=True, is_correct=False).count() == study.screening_per_batch
    assert page.js_errors == []


@browser_test
def test_wrong_eligibility_answer_ends_with_the_screened_out_code(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-ineligible")
    start_from_link(page, live_server, study, "?PROLIFIC_PID=notnative01&STUDY_ID=STU1&SESSION_ID=SES3")
    page.click("#eligibility-form button[type=submit]")  # nothing picked: the page asks, the server isn't called
    assert "Please answer" in page.inner_text("#eligibility-error")
    page.get_by_label("no").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "end")
    shots(page, "screened-out")

    assert page.inner_text("#end-code") == SCREENED_OUT
    assert page.get_attribute("#end-redirect", "href") == REDIRECT.format(code=SCREENED_OUT)
    assert "different profile" in page.inner_text("#end-message")
    participant = Participant.objects.get(study=study, external_id="notnative01")
    assert participant.screened_out
    assert not Response.objects.filter(participant=participant).exists()
    # Coming back with the same link shows the same polite end, not a new chance at the questions.
    page.reload()
    on_screen(page, "end")
    assert page.inner_text("#end-code") == SCREENED_OUT
    assert page.js_errors == []


@browser_test
def test_reload_mid_batch_resumes_at_the_same_item(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-resume")
    start_from_link(page, live_server, study, "?PROLIFIC_PID=reloader01&STUDY_ID=STU1&SESSION_ID=SES4")
    pass_eligibility_and_instructions(page)
    answer_ordering_item(page)
    answer_ordering_item(page)
    before = (current_item_id(page), page.inner_text("#text-a1"), page.inner_text("#progress-text"))
    assert before[2] == "Item 3 of 6"

    page.reload()
    on_screen(page, "item")  # straight back to the item: no consent, eligibility or instructions again
    shots(page, "after-reload")
    after = (current_item_id(page), page.inner_text("#text-a1"), page.inner_text("#progress-text"))
    assert after == before
    assert page.get_attribute("#progress-bar", "aria-valuenow") == "2"
    participant = Participant.objects.get(study=study, external_id="reloader01")
    assert Participant.objects.filter(study=study).count() == 1
    assert Response.objects.filter(participant=participant).count() == 2
    while page.evaluate("document.body.dataset.screen") == "item":
        answer_ordering_item(page)
    on_screen(page, "done")
    assert Response.objects.filter(participant=participant, is_valid=True).count() == 6
    assert page.js_errors == []


@browser_test
def test_keyboard_shortcuts_answer_items_from_an_mturk_link(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-keyboard", eligibility_questions=[])
    page.goto(f"{live_server.url}/s/{study.slug}/?workerId=A1TURKER&assignmentId=ASG1&hitId=HIT1"
              "&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")  # no eligibility questions in this study: straight to the instructions
    assert "1" in page.inner_text("#instructions-hint") and "Enter" in page.inner_text("#instructions-hint")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert "press" in page.inner_text("#item-hint").lower()

    # Every key press maps to the choice shown under that number: the expected choice everywhere except one
    # ordinary item, where the other key is pressed on purpose, so both keys are proven to pick their own choice.
    keys_used: set[str] = set()
    wrong_on_purpose = None
    for index in range(study.items_per_batch + study.screening_per_batch):
        item_id = current_item_id(page)
        expected = selectors.reservation_expected_answer(public_id=item_id)
        answer = expected
        if wrong_on_purpose is None and not selectors.reservation_is_screening(public_id=item_id):
            wrong_on_purpose = item_id
            answer = "S1-S2" if expected == "S2-S1" else "S2-S1"
        key = "1" if answer == "S1-S2" else "2"
        keys_used.add(key)
        # Focus starts on the item's heading (announced as its position) and the choices form one labelled group.
        assert page.evaluate("document.activeElement.id") == "item-heading"
        assert page.inner_text("#item-heading") == page.inner_text("#progress-text")
        assert page.get_by_role("radiogroup", name="Which sentence matches each anchor in style?").count() == 1
        assert page.get_by_role("radio", name="(S1-S2)").count() == 1
        assert page.get_by_role("radio", name="(S2-S1)").count() == 1
        page.keyboard.press("Enter")  # nothing chosen yet: Enter does nothing
        assert current_item_id(page) == item_id
        page.keyboard.press(key)
        assert page.is_checked(f'input[value="{answer}"]')
        assert not page.is_disabled("#item-submit")
        if index == 0:
            shots(page, "chosen-by-keyboard")
        submit_and_wait(page, item_id, key="Enter")
    on_screen(page, "done")
    # MTurk: the finished assignment is posted back to MTurk's externalSubmit with its id and the code.
    assert page.get_attribute("#mturk-submit", "action") == "https://workersandbox.mturk.com/mturk/externalSubmit"
    assert page.is_visible("#mturk-submit button") and not page.is_visible("#done-redirect")
    assert page.input_value('#mturk-submit input[name="assignmentId"]') == "ASG1"
    assert page.input_value("#mturk-code") == COMPLETED
    shots(page, "mturk-done")
    assert wrong_on_purpose is not None
    participant = Participant.objects.get(study=study, external_id="A1TURKER")
    assert participant.platform == Participant.Platform.MTURK and not participant.excluded
    responses = Response.objects.filter(participant=participant)
    assert responses.count() == study.items_per_batch + study.screening_per_batch
    assert responses.filter(is_correct=True).count() == responses.count() - 1
    assert responses.get(is_correct=False).is_screening is False
    assert all(responses.values_list("is_valid", flat=True))
    assert page.js_errors == []


def _no_horizontal_scroll(page: Any) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"horizontal scroll: content {widths[0]}px in a {widths[1]}px viewport"


@browser_test
def test_phone_viewport_has_no_horizontal_scroll_and_big_tap_targets(
    phone_page: Any, live_server: Any, shots: Any
) -> None:
    page = phone_page
    long_word = "Supercalifragilisticexpialidocious" * 3
    study = quadruple_study("browser-phone", items=2, screening=0)
    item = StudyItem.objects.filter(study=study).first().instance
    item.sentence_1 = f"A sentence with a very long word {long_word} that must wrap."
    item.save()
    page.goto(f"{live_server.url}/s/{study.slug}/")  # an anonymous link
    on_screen(page, "consent")
    _no_horizontal_scroll(page)
    shots(page, "consent")
    page.tap("#consent-agree")
    on_screen(page, "eligibility")
    _no_horizontal_scroll(page)
    page.get_by_label("yes").tap()
    page.tap("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    _no_horizontal_scroll(page)
    shots(page, "instructions")
    page.tap("#instructions-start")
    on_screen(page, "item")
    for n in range(2):
        _no_horizontal_scroll(page)
        for selector in ("label[data-choice]", "#item-submit"):
            for box in [element.bounding_box() for element in page.query_selector_all(selector)]:
                assert box["height"] >= 44 and box["width"] >= 44, f"{selector} too small to tap: {box}"
        shots(page, f"item-{n + 1}")
        item_id = current_item_id(page)
        page.tap(f'label[data-choice="{selectors.reservation_expected_answer(public_id=item_id)}"]')
        page.tap("#item-submit")
        page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    _no_horizontal_scroll(page)
    shots(page, "done")
    participant = Participant.objects.get(study=study)
    assert participant.platform == Participant.Platform.ANONYMOUS
    assert Response.objects.filter(participant=participant, is_valid=True).count() == 2
    assert page.js_errors == []


@browser_test
def test_likert_item_with_two_questions(page: Any, live_server: Any, shots: Any) -> None:
    questions = [
        {"name": "style", "text": "How well was the style changed?", "min": 1, "max": 5,
         "labels": {"1": "Very poor", "2": "Poor", "3": "Acceptable", "4": "Good", "5": "Very good"}},
        {"name": "content", "text": "How well was the content preserved?", "min": 1, "max": 5,
         "labels": {"1": "Very poor", "2": "Poor", "3": "Acceptable", "4": "Good", "5": "Very good"}},
    ]
    items = [{"id": f"likert-{n}", "source": f"gonna be late lol {n}", "rewrite": f"I am going to be late {n}.",
              "reference": f"I will be late {n}.", "target_style": "formal"} for n in range(2)]
    study = study_create(
        slug="browser-likert", item_kind=ItemKind.LIKERT, items=items, questions=questions, eligibility_questions=[],
        settings=study_settings_build(
            title="Rate rewrites", items_per_batch=2, completion_code=COMPLETED, redirect_url=REDIRECT,
            consent_text="Rate rewrites.",
        ),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=rater01&STUDY_ID=STU&SESSION_ID=SES")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")

    assert page.inner_text("#text-source").strip().startswith("Original")
    assert "I am going to be late" in page.inner_text("#text-rewrite")
    groups = page.query_selector_all("[data-screen=item] [role=radiogroup]")
    assert [g.get_attribute("aria-label") for g in groups] == [q["text"] for q in questions]
    assert page.get_by_label("4 — Good").count() == 2  # each option is labelled with its value and its label
    # First item by keyboard: 4 rates the first question, focus moves to the second, 5 rates it.
    first = current_item_id(page)
    page.keyboard.press("4")
    assert page.is_disabled("#item-submit")
    page.keyboard.press("5")
    shots(page, "likert-rated")
    submit_and_wait(page, first, key="Enter")
    # Second item by mouse: 2 and 3.
    second = current_item_id(page)
    page.click('fieldset[data-name="style"] label[data-value="2"]')
    page.click('fieldset[data-name="content"] label[data-value="3"]')
    submit_and_wait(page, second)
    on_screen(page, "done")

    participant = Participant.objects.get(study=study, external_id="rater01")
    stored = {
        (r.study_item.external_id, r.question): r.value
        for r in Response.objects.filter(participant=participant).select_related("study_item")
    }
    assert len(stored) == 4
    assert sorted(stored.values()) == [2.0, 3.0, 4.0, 5.0]
    by_item: dict[str, dict[str, float]] = {}
    for (external_id, question), value in stored.items():
        by_item.setdefault(external_id, {})[question] = value
    assert sorted(map(lambda d: (d["style"], d["content"]), by_item.values())) == [(2.0, 3.0), (4.0, 5.0)]
    assert page.js_errors == []


@browser_test
@pytest.mark.parametrize(("kind", "question"), [
    (ItemKind.TRIPLE, "Which sentence is closest in style to A1?"),
    (ItemKind.STYLE_OR_CONTENT, "Which sentence has the same style as A1 (whatever its content)?"),
], ids=["triple", "style-or-content"])
def test_triple_and_style_or_content_items_show_one_anchor(
    page: Any, live_server: Any, shots: Any, kind: str, question: str
) -> None:
    ensure_components()
    corpus = CorpusFactory()
    for _ in range(2):
        TaskInstanceFactory(corpus=corpus, setup=kind, anchor_2="", anchor_2_style=None)
    ScreeningQuestionFactory.create_batch(2)
    study = study_create(
        slug=f"browser-{kind}", item_kind=kind, setup=kind, corpus=[corpus.name], eligibility_questions=[],
        settings=study_settings_build(
            items_per_batch=2, screening_per_batch=1, max_batches=1, completion_code=COMPLETED,
            consent_text="Short texts.",
        ),
    )
    pid = f"{kind}-01"
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID=T")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    assert "Example" in page.inner_text("[data-screen=instructions]")  # the project's description for the kind
    page.click("#instructions-start")
    on_screen(page, "item")
    shots(page, f"{kind}-item")
    for _ in range(3):
        assert page.query_selector("#text-a2") is None  # one anchor only
        assert page.inner_text("#text-a1").strip() and page.inner_text("#item-question") == question
        item_id = current_item_id(page)
        expected = selectors.reservation_expected_answer(public_id=item_id)
        assert expected in {"S1", "S2"}
        page.keyboard.press("1" if expected == "S1" else "2")
        submit_and_wait(page, item_id, key="Enter")
    on_screen(page, "done")
    responses = Response.objects.filter(participant__external_id=pid)
    assert responses.count() == 3 and all(r.is_correct and r.is_valid for r in responses)
    assert page.js_errors == []


@browser_test
def test_ranking_item_is_ordered_with_keyboard_operable_move_buttons(page: Any, live_server: Any, shots: Any) -> None:
    outputs = [{"id": "o1", "text": "I will be late.", "system": "human"},
               {"id": "o2", "text": "I am gonna be late.", "system": "copy"},
               {"id": "o3", "text": "Late I will be, sadly.", "system": "seq2seq"}]
    study = study_create(
        slug="browser-ranking", item_kind=ItemKind.RANKING, eligibility_questions=[],
        items=[{"id": "rank-1", "source": "gonna be late lol", "outputs": outputs}],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED, consent_text="Rank outputs."),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=ranker01&STUDY_ID=S&SESSION_ID=R")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert "seq2seq" not in page.content() and "human" not in page.content()  # system names stay hidden

    def order() -> list[str]:
        return page.eval_on_selector_all("ol.ranking li", "rows => rows.map(r => r.dataset.output)")

    assert sorted(order()) == ["o1", "o2", "o3"]
    page.set_viewport_size(PHONE)  # ranking on a phone: no sideways scrolling, move buttons big enough to tap
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    for box in [button.bounding_box() for button in page.query_selector_all("ol.ranking .move")]:
        assert box["height"] >= 44 and box["width"] >= 44
    first = order()[0]
    page.focus(f'li[data-output="{first}"]')
    page.keyboard.press("Alt+ArrowDown")  # a focused text moves with Alt+arrows, and keeps the focus
    assert order()[1] == first
    assert page.evaluate("document.activeElement.dataset.output") == first
    target = ["o3", "o1", "o2"]
    for rank, output in enumerate(target):
        # Keyboard only: focus the output's ▲ button and press Enter until it reaches its rank.
        while order().index(output) > rank:
            page.focus(f'li[data-output="{output}"] .up')
            page.keyboard.press("Enter")
    assert order() == target
    assert [text.strip() for text in page.locator("ol.ranking .rank").all_inner_texts()] == ["1", "2", "3"]
    assert page.is_disabled(f'li[data-output="{target[0]}"] .up')
    assert page.is_disabled(f'li[data-output="{target[-1]}"] .down')
    shots(page, "ranked")
    item_id = current_item_id(page)
    page.click("#item-submit")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    assert page.inner_text("#done-code") == COMPLETED
    assert not page.is_visible("#done-redirect")  # this study has no redirect URL: no dead button
    response = Response.objects.get(participant__external_id="ranker01")
    assert json.loads(response.answer) == target
    assert page.js_errors == []


@browser_test
def test_rewrite_item_enforces_the_minimum_length(page: Any, live_server: Any, shots: Any) -> None:
    study = study_create(
        slug="browser-rewrite", item_kind=ItemKind.REWRITE, rewrite_min_length=20, eligibility_questions=[],
        items=[{"id": "rw-1", "source": "gonna be late lol", "target_style": "formal"}],
        settings=study_settings_build(items_per_batch=1, completion_code=COMPLETED, consent_text="Rewrite sentences."),
    )
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=writer01&STUDY_ID=S&SESSION_ID=W")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert "formal" in page.inner_text("label[for=rewrite-text]")
    assert page.evaluate("document.activeElement.id") == "rewrite-text"  # focus lands in the text box
    page.fill("#rewrite-text", "   I'll be late.   ")
    assert page.is_disabled("#item-submit")
    assert page.inner_text("#rewrite-counter") == "13 of at least 20 characters"
    page.keyboard.press("Control+Enter")  # too short: nothing is sent
    assert Response.objects.count() == 0
    shots(page, "too-short")
    text = "I am afraid I will be late."
    page.fill("#rewrite-text", text)
    assert not page.is_disabled("#item-submit")
    item_id = current_item_id(page)
    page.focus("#rewrite-text")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    assert Response.objects.get(participant__external_id="writer01").answer == text
    assert page.js_errors == []


@browser_test
def test_batch_time_limit_passing_mid_batch_ends_politely(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-expiry", eligibility_questions=[])
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=slow01&STUDY_ID=S&SESSION_ID=E")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    answer_ordering_item(page)
    # The participant walks away: the batch's time limit passes before the next answer.
    past = timezone.now() - timedelta(minutes=1)
    Batch.objects.filter(participant__external_id="slow01").update(expires_at=past)
    Reservation.objects.filter(participant__external_id="slow01").update(expires_at=past)
    page.click('label[data-choice="S1-S2"]')
    page.click("#item-submit")
    on_screen(page, "end")
    shots(page, "expired")
    assert "time limit for this batch has passed" in page.inner_text("#end-message")
    assert Batch.objects.get(participant__external_id="slow01").state == Batch.State.EXPIRED
    assert Response.objects.filter(participant__external_id="slow01").count() == 1
    assert page.js_errors == []


@browser_test
def test_a_lapsed_item_is_explained_in_plain_words(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-lapsed", eligibility_questions=[])
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=lapsed01&STUDY_ID=S&SESSION_ID=L")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    # Only this item's reservation lapses (the batch itself is still open): the server answers 410 `expired`.
    Reservation.objects.filter(public_id=current_item_id(page)).update(expires_at=timezone.now() - timedelta(minutes=1))
    page.click('label[data-choice="S2-S1"]')
    page.click("#item-submit")
    page.wait_for_function("document.querySelector('#item-error').textContent.includes('expired')")
    assert page.inner_text("#item-error") == "This item has expired — loading the next one."
    assert page.is_disabled("#item-submit")  # nothing can be sent twice while the notice shows
    shots(page, "item-expired-notice")
    # The engine serves that same lapsed item again, so the page ends politely instead of looping.
    on_screen(page, "end")
    assert "time limit for this batch has passed" in page.inner_text("#end-message")
    assert not Response.objects.filter(participant__external_id="lapsed01").exists()
    assert page.js_errors == []


@browser_test
def test_a_lost_connection_is_explained_and_the_answer_can_be_resent(page: Any, live_server: Any, shots: Any) -> None:
    study = quadruple_study("browser-offline", items=2, screening=0, eligibility_questions=[])
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=offline01&STUDY_ID=S&SESSION_ID=O")
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    item_id = current_item_id(page)
    expected = selectors.reservation_expected_answer(public_id=item_id)
    page.click(f'label[data-choice="{expected}"]')
    page.route("**/answers/", lambda route: route.abort("internetdisconnected"))
    page.click("#item-submit")
    page.wait_for_function("document.querySelector('#item-error').textContent.length > 0")
    assert page.inner_text("#item-error") == "We could not reach the server. Check your connection and try again."
    shots(page, "offline")
    assert current_item_id(page) == item_id and not page.is_disabled("#item-submit")
    assert not Response.objects.filter(participant__external_id="offline01").exists()
    page.unroute("**/answers/")
    submit_and_wait(page, item_id)  # the same choice, sent again once the connection is back
    assert Response.objects.filter(participant__external_id="offline01", is_correct=True).count() == 1
    assert page.js_errors == []


# --- the page itself, without a browser ------------------------------------------------------------------


@pytest.mark.django_db
def test_entry_page_renders_the_study_texts_without_answers(client: Any) -> None:
    ensure_components()
    study = quadruple_study("page-texts")
    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID=abc&STUDY_ID=s1&SESSION_ID=x1")
    assert response.status_code == 200
    html = response.content.decode()
    assert "judge the style of short English sentences" in html and "Answer: S2-S1" in html
    assert "Is English your native language?" in html
    assert '"accept"' not in html  # accepted eligibility answers stay on the server
    assert response.context["config"]["who"] == {
        "platform": "prolific", "participant": "abc", "study_ref": "s1", "session_ref": "x1",
    }
    assert response.context["config"]["api"] == "/api/v1/"
    assert not response.cookies  # the page sets no cookie: the session token lives in the browser's storage


@pytest.mark.parametrize(("query", "expected"), [
    ({"PROLIFIC_PID": "p", "STUDY_ID": "s", "SESSION_ID": "x"},
     {"platform": "prolific", "participant": "p", "study_ref": "s", "session_ref": "x"}),
    ({"workerId": "W", "hitId": "H", "assignmentId": "A"},
     {"platform": "mturk", "participant": "W", "study_ref": "H", "session_ref": "A"}),
    ({}, {"platform": "anonymous", "participant": "", "study_ref": "", "session_ref": ""}),
])
def test_participant_from_query(query: dict[str, str], expected: dict[str, str]) -> None:
    assert participant_from_query(query) == expected


def test_mturk_submit_url_only_for_mturk_hosts() -> None:
    assert mturk_submit_url({"turkSubmitTo": "https://www.mturk.com/"}) == "https://www.mturk.com/mturk/externalSubmit"
    assert mturk_submit_url({"turkSubmitTo": "https://evil.example.com"}) == ""
    assert mturk_submit_url({}) == ""


@pytest.mark.django_db
def test_unknown_closed_and_malformed_links_get_a_clear_page(client: Any) -> None:
    missing = client.get("/s/no-such-study/")
    assert missing.status_code == 404 and "could not find this study" in missing.content.decode()
    StudyFactory(slug="imported-study", origin=Study.Origin.IMPORTED)
    assert client.get("/s/imported-study/").status_code == 404
    StudyFactory(slug="closed-study", status=Study.Status.CLOSED, title="Old study")
    closed = client.get("/s/closed-study/")
    assert closed.status_code == 410 and "is closed" in closed.content.decode()
    StudyFactory(slug="open-study")
    too_long = client.get("/s/open-study/", {"PROLIFIC_PID": "x" * 200})
    assert too_long.status_code == 400 and "participant" in too_long.content.decode()
    preview = client.get("/s/open-study/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H"})
    assert preview.status_code == 200 and "Accept the HIT to start" in preview.content.decode()
    assert "annotator.js" not in preview.content.decode()  # no script, so no session is opened


def test_prose_html_reflows_hard_wrapped_text_keeps_example_lines_and_escapes() -> None:
    text = "You see two anchors and\ntwo sentences.\n\nExample\n  A1: gonna be late lol\nAnswer: S2-S1\n\n<b>x</b> & y"
    assert prose_html(text) == (
        "<p>You see two anchors and two sentences.</p>\n"
        "<p>Example<br>A1: gonna be late lol<br>Answer: S2-S1</p>\n"
        "<p>&lt;b&gt;x&lt;/b&gt; &amp; y</p>"
    )
    assert prose_html("  \n ") == ""


@browser_test
def test_returning_participant_sees_their_code_again_then_a_clear_refusal(
    browser: Any, page: Any, live_server: Any, shots: Any
) -> None:
    study = quadruple_study("browser-return", items=1, screening=0, eligibility_questions=[])
    link = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=back01&STUDY_ID=S&SESSION_ID=B"
    page.goto(link)
    on_screen(page, "consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    answer_ordering_item(page)
    on_screen(page, "done")
    page.reload()  # same browser: the stored session shows the same code again
    on_screen(page, "done")
    assert page.inner_text("#done-code") == COMPLETED

    # Another browser (nothing stored), the same Prolific link (id and SESSION_ID): the code again, not consent and no
    # new batch (a returning participant is never sent through the study twice).
    other = browser.new_context()
    try:
        second = other.new_page()
        second.goto(link)
        second.wait_for_selector('body[data-screen="done"]')
        shots(second, "code-again-new-browser")
        assert second.inner_text("#done-code") == COMPLETED
        # the same id with another SESSION_ID (someone who knows only the id): a clear refusal, no code
        third = other.new_page()
        third.goto(link.replace("SESSION_ID=B", "SESSION_ID=OTHER"))
        third.wait_for_selector('body[data-screen="end"]')
        shots(third, "already-participated")
        assert "already taken part" in third.inner_text("#end-message")
        assert COMPLETED not in third.content()
    finally:
        other.close()
    assert Batch.objects.filter(participant__external_id="back01").count() == 1

    # Someone who declines consent is told plainly that nothing more is recorded.
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=declines01&STUDY_ID=S&SESSION_ID=D")
    on_screen(page, "consent")
    page.click("#consent-decline")
    on_screen(page, "end")
    shots(page, "declined")
    assert "chose not to take part" in page.inner_text("#end-heading")
    assert "Your choice has been recorded" in page.inner_text("#end-message")
    assert not Response.objects.filter(participant__external_id="declines01").exists()
    assert page.js_errors == []
