"""The texts the product writes where a researcher wrote none, in the study's language: the default task descriptions
of Likert, ranking and rewrite studies, the rating presets' descriptions, and the question presets' texts and scale
labels (GYAFC, Pauli et al., Mind the Style Gap).

Each is a msgid (marked with `gettext_noop`, so `make messages` puts it in every catalog): an English study stores
it as it is (as English studies always have), a study in another language stores its catalog's translation (English
where the language has no catalog). Only a text that *is* one of these is translated: a researcher's own texts
(descriptions, questions, labels) are stored as written, whatever the study's language.
"""
from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from core.languages import primary_language

LIKERT_DESCRIPTION = gettext_noop(
    "In each question you see an original sentence and a rewrite of it (sometimes with a human reference rewrite).\n"
    "Rate the rewrite on every scale shown. Keys: press the number of a rating.")

RANKING_DESCRIPTION = gettext_noop(
    "In each question you see an original sentence and several rewrites of it by different systems. Order the "
    "rewrites\nfrom best to worst (style change, meaning preserved, fluent).")

REWRITE_DESCRIPTION = gettext_noop(
    "In each question you see a sentence. Rewrite it in the requested style while keeping its meaning.")

GYAFC_RANKING_DESCRIPTION = gettext_noop(
    "In each question you see an informal sentence and several formal rewrites of it by different systems. Rank the\n"
    "rewrites from best to worst overall: how formal, how fluent, and how well they keep the original's meaning. Put "
    "the\nbest rewrite first.")

PAULI_DESCRIPTION = gettext_noop(
    "In each question you see an original sentence and a rewrite of it in a target style. Rate how strongly the "
    "rewrite\nshows the target style, and how well it preserves the content of the original (1 = not at all, 5 = "
    "completely).")

_FIVE = {"1": gettext_noop("Very poor"), "2": gettext_noop("Poor"), "3": gettext_noop("Acceptable"),
         "4": gettext_noop("Good"), "5": gettext_noop("Very good")}
_CONTENT = gettext_noop("How well does the rewrite preserve the content of the original?")
QUESTION_PRESETS: dict[str, list[dict[str, Any]]] = {
    # Mind the Style Gap (Ostheimer et al.): 5-point ratings of style change and content preservation.
    "mind-the-style-gap": [
        {"name": "style_change", "text": gettext_noop("How well does the rewrite change the style as requested?"),
         "min": 1, "max": 5, "labels": _FIVE, "level": "ordinal"},
        {"name": "content_preservation", "text": _CONTENT, "min": 1, "max": 5, "labels": _FIVE, "level": "ordinal"},
    ],
    # GYAFC (Rao & Tetreault 2018, section 4.1): formality -3…+3, fluency 1–5, meaning preservation 1–6 (the STS
    # scale), every label as the paper's; alpha is computed ordinal per question.
    "gyafc": [
        {"name": "formality", "text": gettext_noop("How formal is the rewrite?"), "min": -3, "max": 3,
         "labels": {"-3": gettext_noop("Very Informal"), "-2": gettext_noop("Informal"),
                    "-1": gettext_noop("Somewhat Informal"), "0": gettext_noop("Neutral"),
                    "1": gettext_noop("Somewhat Formal"), "2": gettext_noop("Formal"),
                    "3": gettext_noop("Very Formal")},
         "level": "ordinal"},
        {"name": "fluency", "text": gettext_noop("How fluent is the rewrite?"), "min": 1, "max": 5,
         "labels": {"1": gettext_noop("Other (fragment)"), "2": gettext_noop("Incomprehensible"),
                    "3": gettext_noop("Somewhat Comprehensible"), "4": gettext_noop("Comprehensible"),
                    "5": gettext_noop("Perfect")}, "level": "ordinal"},
        {"name": "meaning", "text": gettext_noop("How much of the original's meaning does the rewrite keep?"),
         "min": 1, "max": 6,
         "labels": {"1": gettext_noop("Completely dissimilar"),
                    "2": gettext_noop("Not equivalent but on the same topic"),
                    "3": gettext_noop("Not equivalent but share some details"), "4": gettext_noop("Roughly equivalent"),
                    "5": gettext_noop("Mostly equivalent"), "6": gettext_noop("Completely equivalent")},
         "level": "ordinal"},
    ],
    # Pauli et al. 2025 (Mind the Style Gap): two 5-point scales, style strength and content preservation.
    "pauli": [
        {"name": "style_strength", "text": gettext_noop("How strongly does the rewrite show the target style?"),
         "min": 1, "max": 5, "labels": {"1": gettext_noop("Not at all"), "2": gettext_noop("Slightly"),
                                        "3": gettext_noop("Moderately"), "4": gettext_noop("Strongly"),
                                        "5": gettext_noop("Completely")}, "level": "ordinal"},
        {"name": "content_preservation", "text": _CONTENT, "min": 1, "max": 5,
         "labels": {"1": gettext_noop("Not at all"), "2": gettext_noop("Slightly"), "3": gettext_noop("Partly"),
                    "4": gettext_noop("Mostly"), "5": gettext_noop("Completely")}, "level": "ordinal"},
    ],
}

DESCRIPTIONS_WRITTEN = frozenset({LIKERT_DESCRIPTION, RANKING_DESCRIPTION, REWRITE_DESCRIPTION,
                                  GYAFC_RANKING_DESCRIPTION, PAULI_DESCRIPTION})


def _english(language: str) -> bool:
    return primary_language(language or "en") == "en"


def product_description(text: str, *, language: str) -> str:
    """`text` in `language` when it is one of the product's descriptions; anything else (a researcher's) as it is."""
    if _english(language) or text not in DESCRIPTIONS_WRITTEN:
        return text
    with translation.override(language):
        return gettext(text)


def product_questions(questions: list[dict[str, Any]] | None, *, language: str) -> list[dict[str, Any]] | None:
    """A question preset's questions with their texts and scale labels in `language`; questions that are not a
    preset (a researcher's own, even one that starts from a preset and changes it) as they are."""
    if not questions or _english(language) or questions not in QUESTION_PRESETS.values():
        return questions
    with translation.override(language):
        return [{**question, "text": gettext(question["text"]),
                 "labels": {value: gettext(label) for value, label in question["labels"].items()}}
                for question in questions]
