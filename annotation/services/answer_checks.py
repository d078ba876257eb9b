"""What an answer must be to be stored: one check for both serving paths (`answers.answer_submit` and the one-statement
`hot_path.answer_fast`), in its own module so that the hot path, which `answers` calls, need not import `answers`."""
from __future__ import annotations

import json
from typing import Any

from annotation.models import ORDERING_KINDS, ItemKind, Study, canonical_answer
from annotation.services.rewrites import rewrite_check
from core.errors import ApplicationError


def _invalid(message: str) -> ApplicationError:
    return ApplicationError(message, details={"answer": [message]})


def validate_answer(*, study: Study, shown: dict[str, Any], answer: Any) -> list[tuple[str, str, float | None]]:
    """The displayed answer as (question, canonical answer, value) rows; ApplicationError (400) when invalid."""
    kind = shown["kind"]
    if kind in ORDERING_KINDS:
        if not isinstance(answer, str) or answer not in shown["choices"]:
            raise _invalid(f"answer must be one of {shown['choices']}.")
        return [("", canonical_answer(shown=shown, displayed=answer), None)]
    if kind == ItemKind.LIKERT:
        if not isinstance(answer, dict):
            raise _invalid("answer must be an object {question name: integer rating}.")
        names = [q["name"] for q in study.questions]
        if set(answer) - set(names):
            raise _invalid(f"answer names a question this study does not ask; the questions are {names}.")
        rows = []
        for question in study.questions:
            value = answer.get(question["name"])
            if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
                raise _invalid(f"question '{question['name']}' needs an integer rating.")
            if not question["min"] <= value <= question["max"]:
                raise _invalid(
                    f"question '{question['name']}': the rating is outside {question['min']}…{question['max']}."
                )
            rows.append((question["name"], str(int(value)), float(value)))
        return rows
    if kind == ItemKind.RANKING:
        ids = sorted(o["id"] for o in shown["outputs"])
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer) or sorted(answer) != ids:
            raise _invalid(f"answer must list every output id exactly once, best first: a permutation of {ids}.")
        return [("", json.dumps(answer), None)]
    if kind == ItemKind.REWRITE:
        if not isinstance(answer, str):
            raise _invalid("answer must be a string.")
        text = answer.strip()
        if len(text) < study.rewrite_min_length:
            raise _invalid(f"the rewrite needs at least {study.rewrite_min_length} characters, got {len(text)}.")
        if len(text) > 5000:
            raise _invalid("the rewrite is longer than 5000 characters.")
        if "\x00" in text:
            raise _invalid("the rewrite contains a NUL character.")
        refused = rewrite_check(shown=shown, text=text)  # max length, copy of the source (reviewed studies)
        if refused:
            raise _invalid(refused)
        return [("", text, None)]
    raise _invalid(f"unknown item kind {kind!r}.")
