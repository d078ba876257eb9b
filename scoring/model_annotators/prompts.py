"""What a model annotator is asked: the study's own instructions and practice examples, then the item exactly as a
participant saw it (`annotation.services.display.shown_for_item` and `public_item`, the texts under the labels the
participant's page uses, the question in the page's words), in every order of display.

Orders: ordering items in both S1/S2 orders, quadruples also with the anchors A1/A2 swapped (four orders; a
participant never sees swapped anchors, but a model's answer must not depend on them either); Likert questions
with the scale listed upwards and downwards; rankings with the outputs in their stored order and reversed. Each
displayed answer maps back to the canonical answer a Response would store (`validate_answer`), so the model's
answers compare with the crowd's as they are.
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from annotation.models import ORDERING_KINDS, ItemKind, Study, StudyItem, swap_answer
from annotation.services.answers import validate_answer
from annotation.services.display import public_item, public_questions, shown_for_item
from core.errors import ApplicationError
from core.model_backends import ChoiceQuestion
from scoring.error_codes import TOO_MANY_OUTPUTS, UNSUPPORTED_KIND

# The question under each kind of item, as the participant's page words it (annotation/static/annotation/items.js;
# tests/scoring/test_model_prompts.py checks the two agree).
QUESTIONS = {
    ItemKind.QUADRUPLE: "Which sentence matches each anchor in style?",
    ItemKind.TRIPLE: "Which sentence is closest in style to A1?",
    ItemKind.STYLE_OR_CONTENT: "Which sentence has the same style as A1 (whatever its content)?",
    ItemKind.RANKING: "Order these texts from best (top) to worst (bottom).",
}
RELATIONS = {ItemKind.TRIPLE: " is closer in style to ", ItemKind.STYLE_OR_CONTENT: " has the style of "}
SYSTEM = ("You are a participant in an annotation study. Read the study's instructions, then answer the question "
          "about the item with exactly one of the allowed answers.")
MAX_RANKED_OUTPUTS = 5  # rankings are answered by choosing one of the n! orders: 120 at most
KINDS = (*ORDERING_KINDS, ItemKind.LIKERT, ItemKind.RANKING)


@dataclass(frozen=True)
class Ask:
    """One question to a model: an item (a Likert question of it) in one order of display."""

    item_id: int
    question_name: str
    order: str
    shown: dict[str, Any]
    question: ChoiceQuestion
    canonical: dict[str, tuple[str, float | None]]  # displayed choice → (canonical answer, value)


def study_kind_check(study: Study) -> None:
    if study.item_kind not in KINDS:
        raise ApplicationError(f"Study '{study.slug}' is a {study.item_kind} study: model annotators answer "
                               "quadruple, triple, style-or-content, Likert and ranking items.",
                               code=UNSUPPORTED_KIND, field="study")


def instructions(study: Study) -> str:
    """The study's task description as participants read it (keyboard tips left out), then its practice items
    with their answers and explanations, as worked examples."""
    lines = [line for line in (study.task_description or "").splitlines() if not line.startswith("Keys:")]
    text = "\n".join(lines).strip()
    examples = []
    for n, practice in enumerate(study.practice_items.order_by("position"), start=1):
        texts = {"anchor_1": practice.anchor_1, "sentence_1": practice.sentence_1, "sentence_2": practice.sentence_2}
        if study.item_kind == ItemKind.QUADRUPLE:
            texts["anchor_2"] = practice.anchor_2
        body = _ordering_body(study.item_kind, texts)
        why = f" {practice.explanation}" if practice.explanation else ""
        examples.append(f"Practice question {n}\n{body}\nAnswer: {practice.correct_answer}.{why}")
    if examples:
        text += "\n\n" + "\n\n".join(examples)
    return text


def _ordering_body(kind: str, texts: dict[str, str]) -> str:
    if kind == ItemKind.QUADRUPLE:
        return (f"Anchors\nA1: {texts['anchor_1']}\nA2: {texts['anchor_2']}\n"
                f"Sentences\nS1: {texts['sentence_1']}\nS2: {texts['sentence_2']}")
    return f"A1: {texts['anchor_1']}\nS1: {texts['sentence_1']}\nS2: {texts['sentence_2']}"


def _describe(kind: str, choice: str) -> str:
    if kind == ItemKind.QUADRUPLE:
        first, second = choice.split("-")
        return f"{first} goes with A1, {second} goes with A2"
    return f"{choice}{RELATIONS[kind]}A1"


def _choice_question(study_text: str, body: str, question: str, options: list[tuple[str, str]]) -> ChoiceQuestion:
    choices = tuple(choice for choice, _ in options)
    listed = "\n".join(f"- {choice}: {meaning}" if meaning else f"- {choice}" for choice, meaning in options)
    user = (f"{body}\n\n{question}\n{listed}\n\nAnswer with exactly one of: {', '.join(choices)}.")
    prompt = f"{SYSTEM}\n\nInstructions:\n{study_text}\n\nItem:\n{user}\nAnswer:"
    return ChoiceQuestion(messages=({"role": "system", "content": f"{SYSTEM}\n\nInstructions:\n{study_text}"},
                                    {"role": "user", "content": user}), prompt=prompt, choices=choices)


def _ordering_asks(study: Study, item: StudyItem, text: str) -> Iterator[Ask]:
    kind = item.kind or study.item_kind
    anchor_orders = (False, True) if kind == ItemKind.QUADRUPLE else (False,)
    for anchors_swapped, swapped in itertools.product(anchor_orders, (False, True)):
        shown = shown_for_item(study=study, item=item, swapped=swapped)
        public = public_item(shown=shown, public_id="model", position=0, study=study)
        texts = dict(public["texts"])
        if anchors_swapped:
            texts["anchor_1"], texts["anchor_2"] = texts["anchor_2"], texts["anchor_1"]
        options = [(choice, _describe(kind, choice)) for choice in public["choices"]]
        order = f"s{'21' if swapped else '12'}" + (f"-a{'21' if anchors_swapped else '12'}"
                                                   if kind == ItemKind.QUADRUPLE else "")
        canonical = {}
        for choice in public["choices"]:
            # Swapped anchors flip which pairing a displayed choice means; then the S1/S2 display swap is undone
            # exactly as for a participant's answer.
            displayed = swap_answer(choice) if anchors_swapped else choice
            answer = validate_answer(study=study, shown=shown, answer=displayed)[0][1]
            canonical[choice] = (answer, None)
        yield Ask(item.pk, "", order, {**shown, "texts": texts, "anchors_swapped": anchors_swapped},
                  _choice_question(text, _ordering_body(kind, texts), QUESTIONS[kind], options), canonical)


def _likert_asks(study: Study, item: StudyItem, text: str) -> Iterator[Ask]:
    shown = shown_for_item(study=study, item=item)
    texts = shown["texts"]
    cards = []
    if texts.get("source"):
        cards.append(f"Original: {texts['source']}")
    if texts.get("rewrite"):
        style = texts.get("target_style")
        cards.append(f"Rewrite ({style}): {texts['rewrite']}" if style else f"Rewrite: {texts['rewrite']}")
    if texts.get("reference"):
        cards.append(f"Reference: {texts['reference']}")
    for question in public_questions(study):
        values = list(range(int(question["min"]), int(question["max"]) + 1))
        for order, listed in (("scale-up", values), ("scale-down", values[::-1])):
            labels = question.get("labels") or {}
            options = [(str(v), labels.get(str(v), "")) for v in listed]
            canonical = {str(v): (str(v), float(v)) for v in values}
            yield Ask(item.pk, question["name"], order, {**shown, "question": question["name"], "scale": listed},
                      _choice_question(text, "\n".join(cards), question.get("text") or question["name"], options),
                      canonical)


def _ranking_asks(study: Study, item: StudyItem, text: str) -> Iterator[Ask]:
    for order, reverse in (("outputs-stored", False), ("outputs-reversed", True)):
        shown = shown_for_item(study=study, item=item, outputs_reversed=reverse)
        outputs = shown["outputs"]
        if len(outputs) > MAX_RANKED_OUTPUTS:
            raise ApplicationError(f"Item {item.external_id} ranks {len(outputs)} outputs; model annotators rank "
                                   f"at most {MAX_RANKED_OUTPUTS} (one answer per order of them).",
                                   code=TOO_MANY_OUTPUTS, field="study")
        labels = {f"T{n}": output["id"] for n, output in enumerate(outputs, start=1)}
        body = (f"Original: {shown['texts']['source']}\n\n" if shown["texts"].get("source") else "") + "\n".join(
            f"T{n}: {output['text']}" for n, output in enumerate(outputs, start=1))
        canonical = {}
        for permutation in itertools.permutations(labels):
            choice = " > ".join(permutation)
            ranking = [labels[label] for label in permutation]
            canonical[choice] = (validate_answer(study=study, shown=shown, answer=ranking)[0][1], None)
        options = [(choice, "") for choice in canonical]
        question = f"{QUESTIONS[ItemKind.RANKING]} Give the labels best first, separated by ' > '."
        yield Ask(item.pk, "", order, {**shown, "labels": labels}, _choice_question(text, body, question, options),
                  canonical)


def item_asks(*, study: Study, item: StudyItem, text: str | None = None) -> list[Ask]:
    """Every question a model is asked about this item (one per order, per Likert question)."""
    text = instructions(study) if text is None else text
    kind = item.kind or study.item_kind
    if kind in ORDERING_KINDS:
        return list(_ordering_asks(study, item, text))
    if kind == ItemKind.LIKERT:
        return list(_likert_asks(study, item, text))
    if kind == ItemKind.RANKING:
        return list(_ranking_asks(study, item, text))
    raise ApplicationError(f"Item {item.external_id}: model annotators do not answer {kind} items.",
                           code=UNSUPPORTED_KIND)


def study_asks(*, study: Study, items: list[StudyItem] | None = None) -> list[Ask]:
    study_kind_check(study)
    text = instructions(study)
    items = items if items is not None else list(
        StudyItem.objects.filter(study=study).select_related("instance").order_by("position", "id"))
    return [ask for item in items for ask in item_asks(study=study, item=item, text=text)]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
