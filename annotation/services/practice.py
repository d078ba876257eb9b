"""Practice items before the first batch: served one by one to a session's participant, answered with feedback,
shown once per participant (across all of their sessions), and stored apart from responses, so that they never
count as answers, in agreement, filters or exports."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction

from annotation.error_codes import ANSWER_CONFLICT, INVALID_PRACTICE, WRONG_STATE
from annotation.models import CHOICES, ORDERING_KINDS, Batch, ItemKind, PracticeAnswer, PracticeItem, Study
from annotation.services.session_lookup import session_load
from core.error_codes import INVALID, NOT_FOUND
from core.errors import ApplicationError

PRACTICE_STATES = (Batch.State.INSTRUCTIONS, Batch.State.ITEMS)
TEXT_FIELDS = ("anchor_1", "anchor_2", "sentence_1", "sentence_2")


def practice_items_set(*, study: Study, items: Sequence[dict[str, Any]]) -> int:
    """Replace the study's practice items; each needs anchor_1, sentence_1, sentence_2 (anchor_2 for quadruples),
    a correct_answer among the kind's choices, and optionally an explanation."""
    if study.item_kind not in ORDERING_KINDS:
        raise ApplicationError(f"practice items are for ordering studies (quadruple, triple, style-or-content), not "
                               f"{study.item_kind}", code=INVALID_PRACTICE, field="practice")
    choices = CHOICES[study.item_kind]
    rows = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ApplicationError(f"practice item {number}: expected an object", code=INVALID_PRACTICE,
                                   field="practice")
        needed = ["anchor_1", "sentence_1", "sentence_2"] + (["anchor_2"] if study.item_kind == ItemKind.QUADRUPLE
                                                              else [])
        missing = [key for key in needed if not str(item.get(key) or "").strip()]
        if missing:
            raise ApplicationError(f"practice item {number}: missing {', '.join(missing)}", code=INVALID_PRACTICE,
                                   field="practice")
        if item.get("correct_answer") not in choices:
            raise ApplicationError(f"practice item {number}: correct_answer must be one of {', '.join(choices)}, got "
                                   f"{item.get('correct_answer')!r}", code=INVALID_PRACTICE, field="practice")
        rows.append(PracticeItem(study=study, position=number - 1, correct_answer=item["correct_answer"],
                                 explanation=str(item.get("explanation") or ""),
                                 **{key: str(item.get(key) or "").strip() for key in TEXT_FIELDS}))
    with transaction.atomic():
        PracticeItem.objects.filter(study=study).delete()
        PracticeItem.objects.bulk_create(rows)
    return len(rows)


def _public(item: PracticeItem, kind: str) -> dict[str, Any]:
    texts = {"anchor_1": item.anchor_1, "sentence_1": item.sentence_1, "sentence_2": item.sentence_2}
    if kind == ItemKind.QUADRUPLE:
        texts["anchor_2"] = item.anchor_2
    return {"id": f"practice-{item.pk}", "kind": kind, "position": item.position, "texts": texts,
            "choices": CHOICES[kind]}


def practice_preview(*, study: Study) -> list[dict[str, Any]]:
    """The study's practice items with their answers and explanations, for the researcher's preview (which checks
    the answers in the browser and stores nothing)."""
    return [{"item": _public(item, study.item_kind), "correct_answer": item.correct_answer,
             "explanation": item.explanation}
            for item in PracticeItem.objects.filter(study=study).order_by("position")]


def _session(token: str) -> Batch:
    batch = session_load(token=token)
    if batch.state not in PRACTICE_STATES:
        raise ApplicationError(f"Cannot practise in state '{batch.state}'.", code=WRONG_STATE, status=409,
                               details={"state": batch.state})
    return batch


def practice_next(*, token: str) -> dict[str, Any]:
    """The participant's next unanswered practice item, or `item: null` once all are answered (or there are none)."""
    batch = _session(token)
    items = list(PracticeItem.objects.filter(study=batch.study).order_by("position"))
    answered = set(PracticeAnswer.objects.filter(participant=batch.participant, item__study=batch.study)
                   .values_list("item_id", flat=True))
    pending = [item for item in items if item.pk not in answered]
    return {"item": _public(pending[0], batch.study.item_kind) if pending else None,
            "remaining": len(pending), "total": len(items)}


PRACTICE_ID = re.compile(r"practice-(\d{1,18})")


def practice_answer(*, token: str, item: Any, answer: Any) -> dict[str, Any]:
    """Record the answer to a practice item and return the feedback: right or not, the correct answer, why."""
    batch = _session(token)
    public_id = item if isinstance(item, str) else ""
    matched = PRACTICE_ID.fullmatch(public_id)  # shape first: junk never reaches a query, nor the reply
    practice = PracticeItem.objects.filter(study=batch.study, pk=int(matched[1])).first() if matched else None
    if practice is None:
        raise ApplicationError("Practice item not found.", code=NOT_FOUND, status=404)
    choices = CHOICES[batch.study.item_kind]
    if answer not in choices:
        raise ApplicationError(f"The answer must be one of {', '.join(choices)}.", code=INVALID,
                               details={"answer": [f"one of {', '.join(choices)}"]})
    try:
        with transaction.atomic():
            PracticeAnswer.objects.create(participant=batch.participant, item=practice, answer=answer,
                                          is_correct=answer == practice.correct_answer)
    except IntegrityError:
        raise ApplicationError("This practice item has been answered already.", code=ANSWER_CONFLICT,
                               status=409) from None
    remaining = (PracticeItem.objects.filter(study=batch.study)
                 .exclude(answers__participant=batch.participant).count())
    return {"item": public_id, "correct": answer == practice.correct_answer,
            "correct_answer": practice.correct_answer, "explanation": practice.explanation, "remaining": remaining}
