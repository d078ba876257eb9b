"""Chromium walks of studies in other languages (issue 33): a French quadruple study from consent to the end, on a
desktop and a phone viewport, with axe on each screen (0 critical, 0 serious), `lang="fr"` on the page and on each
item text, and no English string of the English catalog anywhere on screen, its instructions the product's own
(composed from its component and setup) in French; an Arabic study right to left; an Arabic (right-to-left) rewrite
study end to end on both viewports, its persona questions (texts and choices) in Arabic, the long country list one
drop-down whose Arabic names post the stable English values."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polib
import pytest

from annotation.models import Participant, Response
from annotation.services.rewrites import rewrite_study_create
from tests.annotation.accessibility import assert_accessible

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.helpers import settings_pop
from tests.annotation.test_views_browser import NEXT_ITEM_OR_END, answer_ordering_item, on_screen, quadruple_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
LOCALE = Path(__file__).resolve().parents[2] / "locale"
LINK = "?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID={pid}"
FRENCH_TEXTS = {
    "title": "Quelles phrases partagent un style ?",
    "consent_text": "Vous allez juger le style de courtes phrases. Vos réponses servent à la recherche.",
    "task_description": "",  # none written: the product composes them, in French (checked on the instructions)
    "eligibility_questions": [{"name": "natif", "text": "Le français est-il votre langue maternelle ?",
                               "choices": ["oui", "non"], "accept": ["oui"]}],
}


def _english_catalog(language: str = "fr") -> list[re.Pattern[str]]:
    """Every English string of the catalogs (its pieces between placeholders), where `language` says it otherwise."""
    patterns = []
    for domain in ("django", "djangojs"):
        for entry in polib.pofile(str(LOCALE / language / "LC_MESSAGES" / f"{domain}.po")):
            if entry.obsolete or entry.msgstr == entry.msgid:
                continue
            for piece in re.split(r"%\(\w+\)[sd]|<[^>]+>", entry.msgid):
                piece = piece.strip(" .:;,—()")
                if piece in entry.msgstr:
                    continue  # the same in both (a key's name: Ctrl, Enter)
                if len(piece) >= 4 or piece in {"Next", "Item"}:
                    patterns.append(re.compile(r"(?<![\w’'])" + re.escape(piece) + r"(?![\w’'])"))
    return patterns


ENGLISH = {"fr": _english_catalog("fr"), "ar": _english_catalog("ar")}


def _check_french(page: Any, where: str) -> None:
    _check_language(page, where, "fr")


def _check_language(page: Any, where: str, language: str) -> None:
    assert page.evaluate("document.documentElement.lang") == language
    # What a participant sees and hears, less the item texts themselves (the study's data, shown as written).
    shown = page.evaluate("""() => {
        const clone = document.body.cloneNode(true);
        clone.querySelectorAll('.text-card p, .output, [hidden], noscript, script').forEach(n => n.remove());
        const labels = Array.from(clone.querySelectorAll('[aria-label]')).map(n => n.getAttribute('aria-label'));
        return clone.innerText + '\\n' + labels.join('\\n') + '\\n' + document.title;
    }""")
    english = sorted({p.pattern for p in ENGLISH[language] if p.search(shown)})
    assert not english, f"English on the {language} {where}: {english}"
    assert_accessible(page, f"the {language} {where}")


def _walk_french_study(page: Any, live_server: Any, slug: str) -> None:
    study = quadruple_study(slug, items=2, screening=1, language="fr", **FRENCH_TEXTS)
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid=slug))
    on_screen(page, "consent")
    _check_french(page, "consent")
    assert page.inner_text("#consent-agree") == "J’accepte — continuer"
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    _check_french(page, "eligibility questions")
    page.get_by_label("oui").check()
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    instructions = page.inner_text("[data-screen=instructions] .instructions")
    assert "Dans chaque question, vous voyez quatre phrases" in instructions
    assert "Réponse : S2-S1 (S2 est complète comme A1, S1 est contractée comme A2)." in instructions
    _check_french(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    assert page.evaluate("Array.from(document.querySelectorAll('.text-card p')).every(p => p.lang === 'fr')")
    assert "Élément" in page.inner_text("#progress-text")
    _check_french(page, "item")
    while page.evaluate("document.body.dataset.screen") == "item":
        item_id = page.get_attribute("#item-body", "data-item-id")
        answer_ordering_item(page)
        page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    assert page.inner_text("#done-heading") == "Merci — vous avez terminé !"
    _check_french(page, "end")
    assert page.js_errors == []


def test_a_french_quadruple_study_on_a_desktop(page: Any, live_server: Any) -> None:
    _walk_french_study(page, live_server, "fr-desktop")


def test_a_french_quadruple_study_on_a_phone(phone_page: Any, live_server: Any) -> None:
    _walk_french_study(phone_page, live_server, "fr-phone")


def test_an_arabic_study_is_right_to_left(page: Any, live_server: Any) -> None:
    study = quadruple_study("ar-rtl", items=2, screening=0, language="ar", title="أي الجمل تتشارك الأسلوب؟",
                            consent_text="", eligibility_questions=[])
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid="ar1"))
    on_screen(page, "consent")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]
    assert page.inner_text("#consent-agree") == "أوافق — متابعة"
    assert_accessible(page, "the Arabic consent")
    page.click("#consent-agree")
    on_screen(page, "instructions")
    page.click("#instructions-start")
    on_screen(page, "item")
    directions = page.evaluate("Array.from(document.querySelectorAll('.text-card p')).map(p => [p.lang, p.dir])")
    assert directions and all(pair == ["ar", "rtl"] for pair in directions)
    assert page.evaluate("getComputedStyle(document.querySelector('#item-submit')).direction") == "rtl"
    assert_accessible(page, "an Arabic item")
    assert page.js_errors == []


ARABIC_SOURCES = [("a1", "مرحبا شو أخبارك بدي أشوفك بكرة بالشغل"), ("a2", "معليش رح أتأخر شوي اليوم عالاجتماع")]
ARABIC_REWRITES = ["مرحبًا، كيف حالك؟ أودّ أن أراك غدًا في العمل.", "أعتذر، سأتأخر قليلًا عن الاجتماع اليوم."]


def _walk_arabic_rewrite_study(page: Any, live_server: Any, slug: str) -> None:
    study, _ = rewrite_study_create(
        slug=slug, sources=ARABIC_SOURCES, target_style="رسمي", min_length=10, max_length=200,
        eligibility_questions=[], filters={"min_words": 0}, persona=["gender", "country"], language="ar",
        settings=settings_pop({}, annotators_per_item=1, items_per_batch=2, max_batches=1))
    page.goto(f"{live_server.url}/s/{study.slug}/" + LINK.format(pid=slug))
    on_screen(page, "consent")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]
    _check_language(page, "consent", "ar")  # the default consent text and the composed instructions too
    # nothing widens a right-to-left page (a phone would zoom the whole page out to show it)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.click("#consent-agree")
    on_screen(page, "eligibility")
    # ~250 countries: one labelled drop-down, not 250 radio buttons; nothing chosen is refused in the page
    country = page.locator("#eligibility-form select")
    assert country.count() == 1 and page.locator("#eligibility-form input[type=radio]").count() == 4  # gender
    assert country.locator("option").count() > 200
    # The persona questions in Arabic: their texts, the gender choices, the countries' names (CLDR's Arabic ones)
    _check_language(page, "persona questions", "ar")
    shown = page.inner_text("#eligibility-form")
    assert "جنسك؟" in shown and "البلد الذي تعيش فيه؟" in shown and "أنثى" in shown
    assert "Your gender?" not in shown and "female" not in shown and "Jordan" not in shown
    page.click("#eligibility-form button[type=submit]")
    assert page.inner_text("#eligibility-error").startswith("يُرجى الإجابة عن")
    page.get_by_label("أنثى").check()
    page.get_by_label("البلد الذي تعيش فيه؟").select_option(label="الأردن")
    page.click("#eligibility-form button[type=submit]")
    on_screen(page, "instructions")
    # what is stored is the stable value, the same as an English study's answer
    assert Participant.objects.get(study=study, external_id=slug).persona == {"gender": "female", "country": "Jordan"}
    _check_language(page, "instructions", "ar")
    page.click("#instructions-start")
    for rewrite in ARABIC_REWRITES:
        on_screen(page, "item")
        assert page.evaluate("[document.querySelector('#rewrite-text').lang, "
                             "document.querySelector('#rewrite-text').dir]") == ["ar", "rtl"]
        _check_language(page, "rewrite item", "ar")
        item_id = page.get_attribute("#item-body", "data-item-id")
        page.fill("#rewrite-text", rewrite)
        page.click("#item-submit")
        page.wait_for_function(NEXT_ITEM_OR_END, arg=item_id)
    on_screen(page, "done")
    assert page.inner_text("#done-heading") == "شكرًا لك — لقد انتهيت!"
    _check_language(page, "end", "ar")
    stored = Response.objects.filter(study=study, participant__external_id=slug).values_list("answer", flat=True)
    assert sorted(stored) == sorted(ARABIC_REWRITES)
    assert page.js_errors == []


def test_an_arabic_rewrite_study_on_a_desktop(page: Any, live_server: Any) -> None:
    _walk_arabic_rewrite_study(page, live_server, "ar-rewrite-desktop")


def test_an_arabic_rewrite_study_on_a_phone(phone_page: Any, live_server: Any) -> None:
    _walk_arabic_rewrite_study(phone_page, live_server, "ar-rewrite-phone")
