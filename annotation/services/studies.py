"""Creating studies: selecting task instances (or reading Likert/ranking/rewrite items) into study items."""
from __future__ import annotations

import json
import random
import secrets
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.models import ORDERING_KINDS, ItemKind, Study, StudyItem
from core.errors import ApplicationError
from tasks.models import InstanceStatus, Setup, TaskInstance

QUADRUPLE_DESCRIPTION = """\
In each question you see four sentences: two "anchor" sentences, A1 and A2, and two sentences S1 and S2.
A1 and A2 say the same thing in two different styles (for example, one informal and one formal). S1 and S2 also
say the same thing as each other (something different from A1 and A2), again in the two styles.

Your task: match S1 and S2 to the anchors by style, ignoring what the sentences are about.
Choose "S1-S2" if S1 has the style of A1 and S2 the style of A2, or "S2-S1" if S2 has the style of A1 and S1 the
style of A2.

Example
  A1: gonna be late lol
  A2: I am going to be late.
  S1: I would appreciate your help with this.
  S2: pls help me out
Answer: S2-S1 (S2 is informal like A1, S1 is formal like A2).

Keys: press 1 for S1-S2, 2 for S2-S1."""

TRIPLE_DESCRIPTION = """\
In each question you see one "anchor" sentence A1 and two sentences S1 and S2. S1 and S2 say the same thing in two
different styles (for example, one informal and one formal).

Your task: choose the sentence, S1 or S2, that is closest in style to A1, ignoring what the sentences are about.

Example
  A1: gonna be late lol
  S1: I would appreciate your help with this.
  S2: pls help me out
Answer: S2 (informal, like A1).

Keys: press 1 for S1, 2 for S2."""

STYLE_OR_CONTENT_DESCRIPTION = """\
In each question you see one "anchor" sentence A1 and two sentences S1 and S2. One of S1 and S2 has the same style
as A1 (but different content); the other has content similar to A1 (but a different style).

Your task: choose the sentence, S1 or S2, that has the same style as A1 — not the one that means the same.

Example
  A1: gonna be late lol
  S1: I am going to be late.
  S2: pls help me out
Answer: S2 (informal like A1, even though S1 says what A1 says).

Keys: press 1 for S1, 2 for S2."""

LIKERT_DESCRIPTION = """\
In each question you see an original sentence and a rewrite of it (sometimes with a human reference rewrite).
Rate the rewrite on every scale shown. Keys: press the number of a rating."""

RANKING_DESCRIPTION = """\
In each question you see an original sentence and several rewrites of it by different systems. Order the rewrites
from best to worst (style change, meaning preserved, fluent)."""

REWRITE_DESCRIPTION = """\
In each question you see a sentence. Rewrite it in the requested style while keeping its meaning."""

DESCRIPTIONS = {
    ItemKind.QUADRUPLE: QUADRUPLE_DESCRIPTION,
    ItemKind.TRIPLE: TRIPLE_DESCRIPTION,
    ItemKind.STYLE_OR_CONTENT: STYLE_OR_CONTENT_DESCRIPTION,
    ItemKind.LIKERT: LIKERT_DESCRIPTION,
    ItemKind.RANKING: RANKING_DESCRIPTION,
    ItemKind.REWRITE: REWRITE_DESCRIPTION,
}

_FIVE = {"1": "Very poor", "2": "Poor", "3": "Acceptable", "4": "Good", "5": "Very good"}
QUESTION_PRESETS: dict[str, list[dict[str, Any]]] = {
    # Mind the Style Gap (Ostheimer et al.): 5-point ratings of style change and content preservation.
    "mind-the-style-gap": [
        {"name": "style_change", "text": "How well does the rewrite change the style as requested?", "min": 1,
         "max": 5, "labels": _FIVE, "level": "ordinal"},
        {"name": "content_preservation", "text": "How well does the rewrite preserve the content of the original?",
         "min": 1, "max": 5, "labels": _FIVE, "level": "ordinal"},
    ],
    # GYAFC (Rao & Tetreault 2018): formality -3…+3, fluency 1–5, meaning preservation 1–6.
    "gyafc": [
        {"name": "formality", "text": "How formal is the rewrite?", "min": -3, "max": 3,
         "labels": {"-3": "Very informal", "0": "Neutral", "3": "Very formal"}, "level": "interval"},
        {"name": "fluency", "text": "How fluent is the rewrite?", "min": 1, "max": 5,
         "labels": {"1": "Incomprehensible", "3": "Somewhat comprehensible", "5": "Perfect"}, "level": "ordinal"},
        {"name": "meaning", "text": "How much of the original's meaning does the rewrite keep?", "min": 1, "max": 6,
         "labels": {"1": "Completely dissimilar", "6": "Completely equivalent"}, "level": "ordinal"},
    ],
}

DEFAULT_ELIGIBILITY = [
    {"name": "native_english", "text": "Is English your native language?", "choices": ["yes", "no"],
     "accept": ["yes"]},
]

DEFAULT_CONSENT = (
    "You are invited to take part in a research study on how people perceive writing style. You will read short "
    "sentences and answer questions about them. Taking part is voluntary; you may stop at any time. We store your "
    "answers and your platform id, and no other personal data. Answers are used for research only."
)


def questions_validate(questions: Any, *, where: str) -> list[dict[str, Any]]:
    if not isinstance(questions, list) or not questions:
        raise ApplicationError(f"{where}: Likert questions must be a non-empty JSON list.")
    names: set[str] = set()
    for i, q in enumerate(questions):
        label = f"{where}: question {i + 1}"
        if not isinstance(q, dict):
            raise ApplicationError(f"{label}: must be an object.")
        for field in ("name", "min", "max"):
            if field not in q:
                raise ApplicationError(f"{label}: missing field '{field}'.")
        if not isinstance(q["min"], int) or not isinstance(q["max"], int) or q["min"] >= q["max"]:
            raise ApplicationError(f"{label}: 'min' and 'max' must be integers with min < max.")
        if q["name"] in names:
            raise ApplicationError(f"{label}: duplicate name {q['name']!r}.")
        names.add(q["name"])
        if q.get("level", "ordinal") not in ("nominal", "ordinal", "interval", "ratio"):
            raise ApplicationError(f"{label}: level must be nominal, ordinal, interval or ratio.")
    return questions


def questions_load(*, spec: str) -> list[dict[str, Any]]:
    """A preset name (mind-the-style-gap, gyafc) or a path to a JSON file with the question list."""
    if spec in QUESTION_PRESETS:
        return QUESTION_PRESETS[spec]
    path = Path(spec)
    if not path.exists():
        raise ApplicationError(f"--questions: {spec!r} is neither a preset {sorted(QUESTION_PRESETS)} nor a file.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg}).") from exc
    return questions_validate(data, where=str(path))


def items_read_jsonl(*, path: Path, kind: str) -> list[dict[str, Any]]:
    """Likert/ranking/rewrite items, one JSON object a line (id, source, rewrite, reference, target_style, system;
    ranking: outputs [{id, system, text}])."""
    if not path.exists():
        raise ApplicationError(f"--items: file {path} not found.")
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ApplicationError(f"{path}: line {lineno}: invalid JSON ({exc.msg}).") from exc
        if not isinstance(row, dict):
            raise ApplicationError(f"{path}: line {lineno}: expected a JSON object.")
        for field in ("id", "source"):
            if not str(row.get(field, "")).strip():
                raise ApplicationError(f"{path}: line {lineno}: missing field '{field}'.")
        if kind == ItemKind.LIKERT and not str(row.get("rewrite", "")).strip():
            raise ApplicationError(f"{path}: line {lineno}: missing field 'rewrite'.")
        if kind == ItemKind.RANKING:
            outputs = row.get("outputs")
            if not isinstance(outputs, list) or len(outputs) < 2:
                raise ApplicationError(f"{path}: line {lineno}: 'outputs' must list at least 2 outputs.")
            ids = [str(o.get("id", "")) if isinstance(o, dict) else "" for o in outputs]
            if any(not i for i in ids) or len(set(ids)) != len(ids):
                raise ApplicationError(f"{path}: line {lineno}: every output needs a unique 'id'.")
            if any(not str(o.get("text", "")).strip() for o in outputs):
                raise ApplicationError(f"{path}: line {lineno}: every output needs a 'text'.")
        item_id = str(row["id"])
        if item_id in seen:
            raise ApplicationError(f"{path}: line {lineno}: duplicate id {item_id!r}.")
        seen.add(item_id)
        rows.append(row)
    if not rows:
        raise ApplicationError(f"{path}: no items.")
    return rows


def instances_select(*, setup: str, corpus: list[str] | None = None, component: list[str] | None = None,
                     status: str | None = None, count: int | None = None, seed: int = 0) -> list[TaskInstance]:
    qs = TaskInstance.objects.filter(setup=setup).select_related("component").order_by("pk")
    if corpus:
        qs = qs.filter(corpus__name__in=corpus)
    if component:
        qs = qs.filter(component__name__in=component)
    if status:
        qs = qs.filter(status=status)
    instances = list(qs)
    if count is not None and count < len(instances):
        instances = sorted(random.Random(seed).sample(instances, count), key=lambda i: i.pk)
    return instances


def study_create(
    *, slug: str, item_kind: str, title: str = "", setup: str | None = None, corpus: list[str] | None = None,
    component: list[str] | None = None, status: str | None = InstanceStatus.CANDIDATE, count: int | None = None,
    seed: int = 0, annotators_per_item: int = 5, min_correct: int | None = None, items_per_batch: int = 14,
    screening_per_batch: int = 2, max_batches: int = 5, time_limit_minutes: int = 30, adaptive: bool = False,
    allow_multiple_setups: bool = False, items: list[dict[str, Any]] | None = None,
    questions: list[dict[str, Any]] | None = None, consent_text: str | None = None,
    eligibility_questions: list[dict[str, Any]] | None = None, task_description: str | None = None,
    completion_code: str = "", screened_out_code: str = "", redirect_url: str = "", estimated_minutes: int = 10,
    target_hourly_pay: float = 9.0, rewrite_min_length: int = 10, study_status: str = Study.Status.ACTIVE,
) -> Study:
    if item_kind not in ItemKind.values:
        raise ApplicationError(f"--kind must be one of {ItemKind.values}, not {item_kind!r}.")
    if Study.objects.filter(slug=slug).exists():
        raise ApplicationError(f"A study with slug '{slug}' already exists.", code="conflict", status=409)
    if min_correct is None:
        min_correct = annotators_per_item // 2 + 1  # a strict majority: 3 of 5, as STEL
    if item_kind not in ORDERING_KINDS:
        min_correct = min(min_correct, annotators_per_item)  # no correct answers: the m-of-k rule does not apply
    if annotators_per_item < 1 or not 1 <= min_correct <= annotators_per_item:
        raise ApplicationError("need 1 ≤ --min-correct ≤ --annotators-per-item.")
    if items_per_batch < 1 or max_batches < 1 or time_limit_minutes < 1:
        raise ApplicationError("--items-per-batch, --max-batches and --time-limit must be at least 1.")
    selection: dict[str, Any] = {"count": count, "seed": seed}
    instances: list[TaskInstance] = []
    if item_kind in ORDERING_KINDS:
        setup = setup or item_kind
        if setup != item_kind or setup not in Setup.values:
            raise ApplicationError(f"--setup {setup!r} does not match the item kind {item_kind!r}.")
        instances = instances_select(setup=setup, corpus=corpus, component=component, status=status, count=count,
                                     seed=seed)
        if not instances:
            raise ApplicationError(
                f"No task instances match setup={setup} corpus={corpus} component={component} status={status}."
            )
        selection.update({"setup": setup, "corpus": corpus, "component": component, "status": status})
    else:
        if not items:
            raise ApplicationError(f"A {item_kind} study needs --items FILE.jsonl.")
        if item_kind == ItemKind.LIKERT and not questions:
            raise ApplicationError("A likert study needs --questions (a preset name or a JSON file).")
        screening_per_batch = 0
    code = completion_code or secrets.token_hex(4).upper()
    with transaction.atomic():
        study = Study.objects.create(
            slug=slug, title=title or slug, item_kind=item_kind, selection=selection,
            annotators_per_item=annotators_per_item, min_correct=min_correct, items_per_batch=items_per_batch,
            screening_per_batch=screening_per_batch, max_batches_per_participant=max_batches,
            batch_time_limit_minutes=time_limit_minutes, adaptive_stopping=adaptive,
            allow_multiple_setups=allow_multiple_setups,
            consent_text=DEFAULT_CONSENT if consent_text is None else consent_text,
            eligibility_questions=DEFAULT_ELIGIBILITY if eligibility_questions is None else eligibility_questions,
            task_description=task_description or DESCRIPTIONS[item_kind], questions=questions or [],
            completion_code=code, screened_out_code=screened_out_code or f"SCREENED-{code}",
            redirect_url=redirect_url, estimated_minutes=estimated_minutes, target_hourly_pay=target_hourly_pay,
            rewrite_min_length=rewrite_min_length, status=study_status,
        )
        if instances:
            StudyItem.objects.bulk_create([
                StudyItem(study=study, instance=inst, external_id=inst.stel_id, position=i, kind=inst.setup,
                          component=inst.component, family=inst.family, correct_answer=inst.correct_answer)
                for i, inst in enumerate(instances)
            ])
        else:
            StudyItem.objects.bulk_create([
                StudyItem(study=study, external_id=str(row["id"]), position=i, kind=item_kind,
                          payload={k: v for k, v in row.items() if k != "id"})
                for i, row in enumerate(items or [])
            ])
    return study
