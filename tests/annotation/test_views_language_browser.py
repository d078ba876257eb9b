"""Chromium walks of studies in other languages (issue 33): a French quadruple study from consent to the end, on a
desktop and a phone viewport, with axe on each screen (0 critical, 0 serious), `lang="fr"` on the page and on each
item text, and no English string of the English catalog anywhere on screen; an Arabic study right to left."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polib
import pytest

from tests.annotation.accessibility import assert_accessible

# The browser fixtures (one Chromium per module, screenshots): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.test_views_browser import NEXT_ITEM_OR_END, answer_ordering_item, on_screen, quadruple_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
LOCALE = Path(__file__).resolve().parents[2] / "locale"
LINK = "?PROLIFIC_PID={pid}&STUDY_ID=S&SESSION_ID={pid}"
FRENCH_TEXTS = {
    "title": "Quelles phrases partagent un style ?",
    "consent_text": "Vous allez juger le style de courtes phrases. Vos réponses servent à la recherche.",
    "task_description": "Vous verrez quatre phrases. Choisissez celle qui correspond le mieux au style demandé.",
    "eligibility_questions": [{"name": "natif", "text": "Le français est-il votre langue maternelle ?",
                               "choices": ["oui", "non"], "accept": ["oui"]}],
}


def _english_catalog() -> list[re.Pattern[str]]:
    """Every English string of the catalogs (its pieces between placeholders), where French says it otherwise."""
    patterns = []
    for domain in ("django", "djangojs"):
        for entry in polib.pofile(str(LOCALE / "fr" / "LC_MESSAGES" / f"{domain}.po")):
            if entry.obsolete or entry.msgstr == entry.msgid:
                continue
            for piece in re.split(r"%\(\w+\)[sd]|<[^>]+>", entry.msgid):
                piece = piece.strip(" .:;,—()")
                if len(piece) >= 4 or piece in {"Next", "Item"}:
                    patterns.append(re.compile(r"(?<![\w’'])" + re.escape(piece) + r"(?![\w’'])"))
    return patterns


ENGLISH = _english_catalog()


def _check_french(page: Any, where: str) -> None:
    assert page.evaluate("document.documentElement.lang") == "fr"
    # What a participant sees and hears, less the item texts themselves (the study's data, shown as written).
    shown = page.evaluate("""() => {
        const clone = document.body.cloneNode(true);
        clone.querySelectorAll('.text-card p, .output, [hidden], noscript, script').forEach(n => n.remove());
        const labels = Array.from(clone.querySelectorAll('[aria-label]')).map(n => n.getAttribute('aria-label'));
        return clone.innerText + '\\n' + labels.join('\\n') + '\\n' + document.title;
    }""")
    english = sorted({p.pattern for p in ENGLISH if p.search(shown)})
    assert not english, f"English on the French {where}: {english}"
    assert_accessible(page, f"the French {where}")


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
