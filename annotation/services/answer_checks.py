"""What an answer must be to be stored: one check for both serving paths (`answers.answer_submit` and the one-statement
`hot_path.answer_fast`), in its own module so that the hot path, which `answers` calls, need not import `answers`."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext

from annotation.models import ORDERING_KINDS, ItemKind, Study, canonical_answer
from annotation.services.rewrites import rewrite_check
from core.errors import ApplicationError
from core.languages import grapheme_count


def _invalid(message: str) -> ApplicationError:
    """A 400 for the participant, in the language active now (the study's: docs/annotator-api.md, "Languages")."""
    return ApplicationError(message, details={"answer": [message]})


AnswerRows = list[tuple[str, str, float | None]]


def validate_answer(*, study: Study, shown: dict[str, Any], answer: Any) -> AnswerRows:
    """The displayed answer as (question, canonical answer, value) rows; ApplicationError (400) when invalid."""
    kind = shown["kind"]
    if kind in ORDERING_KINDS:
        return _ordering_rows(study, shown, answer)
    rows_of = ANSWER_READERS.get(kind)
    if rows_of is None:
        raise _invalid(gettext("unknown item kind %(kind)s.") % {"kind": repr(kind)})
    return rows_of(study, shown, answer)


def _ordering_rows(study: Study, shown: dict[str, Any], answer: Any) -> AnswerRows:
    if not isinstance(answer, str) or answer not in shown["choices"]:
        raise _invalid(gettext("answer must be one of %(choices)s.") % {"choices": shown["choices"]})
    return [("", canonical_answer(shown=shown, displayed=answer), None)]


def _likert_rows(study: Study, shown: dict[str, Any], answer: Any) -> AnswerRows:
    if not isinstance(answer, dict):
        raise _invalid(gettext("answer must be an object {question name: integer rating}."))
    names = [q["name"] for q in study.questions]
    if set(answer) - set(names):
        raise _invalid(gettext("answer names a question this study does not ask; the questions are %(names)s.")
                       % {"names": names})
    rows: AnswerRows = []
    for question in study.questions:
        value = answer.get(question["name"])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            raise _invalid(gettext("question '%(name)s' needs an integer rating.") % {"name": question["name"]})
        if not question["min"] <= value <= question["max"]:
            raise _invalid(gettext("question '%(name)s': the rating is outside %(min)s…%(max)s.")
                           % {"name": question["name"], "min": question["min"], "max": question["max"]})
        rows.append((question["name"], str(int(value)), float(value)))
    return rows


def _ranking_rows(study: Study, shown: dict[str, Any], answer: Any) -> AnswerRows:
    ids = sorted(o["id"] for o in shown["outputs"])
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer) or sorted(answer) != ids:
        raise _invalid(gettext("answer must list every output id exactly once, best first: a permutation of %(ids)s.")
                       % {"ids": ids})
    return [("", json.dumps(answer), None)]


def _rewrite_rows(study: Study, shown: dict[str, Any], answer: Any) -> AnswerRows:
    if not isinstance(answer, str):
        raise _invalid(gettext("answer must be a string."))
    text = answer.strip()
    length = grapheme_count(text, language=shown.get("language") or "en")  # characters as people count them
    if length < study.rewrite_min_length:
        raise _invalid(gettext("the rewrite needs at least %(minimum)d characters, got %(length)d.")
                       % {"minimum": study.rewrite_min_length, "length": length})
    if len(text) > 5000:
        raise _invalid(gettext("the rewrite is longer than %(maximum)d characters.") % {"maximum": 5000})
    if "\x00" in text:
        raise _invalid(gettext("the rewrite contains a NUL character."))
    refused = rewrite_check(shown=shown, text=text)  # max length, copy of the source (reviewed studies)
    if refused:
        raise _invalid(refused)
    return [("", text, None)]


# How an answer to each item kind is read (the ordering kinds share `_ordering_rows`).
ANSWER_READERS: dict[str, Callable[[Study, dict[str, Any], Any], AnswerRows]] = {
    ItemKind.LIKERT: _likert_rows,
    ItemKind.RANKING: _ranking_rows,
    ItemKind.REWRITE: _rewrite_rows,
}
