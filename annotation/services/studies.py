"""Creating studies: selecting task instances (or reading Likert/ranking/rewrite items) into study items."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext_noop

from annotation.models import ORDERING_KINDS, ItemKind, Study, StudyItem, new_study_code
from annotation.services.consent import special_category_check
from annotation.services.descriptions import task_description_compose
from annotation.services.eligibility_default import eligibility_default
from annotation.services.product_texts import (
    LIKERT_DESCRIPTION,
    QUESTION_PRESETS,
    RANKING_DESCRIPTION,
    REWRITE_DESCRIPTION,
    product_description,
    product_questions,
)
from annotation.services.rewrite_settings import REWRITE_BY_NAME
from annotation.services.screening import screening_require
from annotation.services.study_settings import (
    StudySettings,
    study_setting_check,
    study_settings_build,
)
from core.errors import ApplicationError
from core.json_guard import JsonRefused, json_check, json_parse
from core.languages import language_normalise
from tasks.error_codes import CONFLICT
from tasks.models import Corpus, InstanceStatus, Setup, StyleComponent, TaskInstance

# Ordering kinds: composed from the study's components and setup (annotation/services/descriptions.py); the others'
# defaults and the question presets are the product's texts, stored in the study's language (services.product_texts).
DESCRIPTIONS = {
    ItemKind.LIKERT: LIKERT_DESCRIPTION,
    ItemKind.RANKING: RANKING_DESCRIPTION,
    ItemKind.REWRITE: REWRITE_DESCRIPTION,
}

# An English study's default; another language's is `eligibility_default` in that language.
DEFAULT_ELIGIBILITY = eligibility_default(language="en")

# The researcher's part of the consent when none is given. What is recorded, for how long, who sees it and how to
# withdraw is the statement generated from the study's settings (annotation.services.consent), so this text says
# nothing of it: it could only contradict the statement. Stored in the study's language (its catalog).
DEFAULT_CONSENT = gettext_noop(
    "You are invited to take part in a research study on how people perceive writing style. You will read short "
    "sentences and answer questions about them. Your answers are used for research."
)


def _default_consent(language: str) -> str:
    with translation.override(language):
        return translation.gettext(DEFAULT_CONSENT)


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
    """A preset name (mind-the-style-gap, gyafc, pauli) or a path to a JSON file with the question list."""
    if spec in QUESTION_PRESETS:
        return QUESTION_PRESETS[spec]
    path = Path(spec)
    if not path.exists():
        raise ApplicationError(f"Questions: {spec!r} is neither a preset {sorted(QUESTION_PRESETS)} nor a file.",
                               field="questions")
    try:
        data = json_parse(path.read_text(encoding="utf-8"))
    except JsonRefused as exc:
        raise ApplicationError(f"{path}: {exc.message}", field="questions") from None
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg}).") from exc
    return questions_validate(data, where=str(path))


def items_read_jsonl(*, path: Path, kind: str) -> list[dict[str, Any]]:
    """Likert/ranking/rewrite items, one JSON object a line (id, source, rewrite, reference, target_style, system;
    ranking: outputs [{id, system, text}])."""
    if not path.exists():
        raise ApplicationError(f"Items: file {path} not found.", field="items")
    rows: list[tuple[int, Any]] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json_parse(line)))
        except JsonRefused as exc:
            raise ApplicationError(f"{path}: line {lineno}: {exc.message}", field="items") from None
        except json.JSONDecodeError as exc:
            raise ApplicationError(f"{path}: line {lineno}: invalid JSON ({exc.msg}).", field="items") from exc
    return items_check(rows=rows, kind=kind, where=str(path))


def items_check(*, rows: list[tuple[int, Any]], kind: str, where: str = "Items",
                unit: str = "line") -> list[dict[str, Any]]:
    """The items of a likert, ranking or rewrite study (a file's lines, or the API body's list), each checked:
    an object with a unique id and a source; likert: a rewrite; ranking: at least 2 outputs with ids and texts."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, row in rows:
        at = f"{where}: {unit} {number}"
        if not isinstance(row, dict):
            raise ApplicationError(f"{at}: expected a JSON object.", field="items")
        for name in ("id", "source"):
            if not str(row.get(name, "")).strip():
                raise ApplicationError(f"{at}: missing field '{name}'.", field="items")
        if kind == ItemKind.LIKERT and not str(row.get("rewrite", "")).strip():
            raise ApplicationError(f"{at}: missing field 'rewrite'.", field="items")
        if kind == ItemKind.RANKING:
            outputs = row.get("outputs")
            if not isinstance(outputs, list) or len(outputs) < 2:
                raise ApplicationError(f"{at}: 'outputs' must list at least 2 outputs.", field="items")
            ids = [str(o.get("id", "")) if isinstance(o, dict) else "" for o in outputs]
            if any(not i for i in ids) or len(set(ids)) != len(ids):
                raise ApplicationError(f"{at}: every output needs a unique 'id'.", field="items")
            if any(not str(o.get("text", "")).strip() for o in outputs):
                raise ApplicationError(f"{at}: every output needs a 'text'.", field="items")
        item_id = str(row["id"])
        if item_id in seen:
            raise ApplicationError(f"{at}: duplicate id {item_id!r}.", field="items")
        seen.add(item_id)
        out.append(row)
    if not out:
        raise ApplicationError(f"{where}: no items.", field="items")
    return out


def instances_select(*, setup: str, corpus: list[str] | None = None, component: list[str] | None = None,
                     status: str | None = None, count: int | None = None, seed: int = 0,
                     counts_per_component: dict[str, int] | None = None) -> list[TaskInstance]:
    # A withdrawn instance (its writer's data erased) is never put in a study, whatever status was asked for.
    qs = (TaskInstance.objects.filter(setup=setup).exclude(status=InstanceStatus.WITHDRAWN)
          .select_related("component").order_by("pk"))
    if corpus:
        qs = qs.filter(corpus__name__in=corpus)
    if component:
        qs = qs.filter(component__name__in=component)
    if status:
        qs = qs.filter(status=status)
    instances = list(qs)
    if counts_per_component:  # a sampling plan: its own seeded sample of each component
        chosen: list[TaskInstance] = []
        for name in sorted(counts_per_component):
            pool = [i for i in instances if i.component.name == name]
            size = min(counts_per_component[name], len(pool))
            chosen += random.Random(f"{seed}:{name}").sample(pool, size)
        return sorted(chosen, key=lambda i: i.pk)
    if count is not None and count < len(instances):
        instances = sorted(random.Random(seed).sample(instances, count), key=lambda i: i.pk)
    return instances


def study_codes(*, completion_code: str = "", screened_out_code: str = "") -> tuple[str, str]:
    """The study's two codes: the researcher's, or random ones drawn independently of each other. A screened-out
    code that is, or is derived from, the completion code is refused: it must not earn the full pay."""
    completion_code = (completion_code or "").strip() or new_study_code()
    given = (screened_out_code or "").strip()
    if given.upper() in (completion_code.upper(), f"SCREENED-{completion_code}".upper()):
        raise ApplicationError(
            "Screened-out code must differ from (and not be derived from) the completion code: people screened "
            "out enter it, so it must not earn the full pay.",
            details={"screened_out_code": ["equal to or derived from the completion code"]}, field="screened_out_code",
        )
    screened_out_code = given or new_study_code()
    while screened_out_code == completion_code:  # two random draws: equal by a one-in-10¹² chance
        screened_out_code = new_study_code()
    return completion_code, screened_out_code


def _shown_text_check(**shown: Any) -> None:
    """What a participant's screen shows and a jsonb column stores, held to the JSON rule whichever door it came
    by (core/json_guard.py: a NUL character, too deep a nesting): refused naming the field and the place in it."""
    for field, value in shown.items():
        try:
            json_check(value, path=field)
        except JsonRefused as exc:
            raise ApplicationError(f"{exc.message}", field=field) from None


def corpus_language(instances: list[TaskInstance]) -> str:
    """The language a study takes when none is given: its instances' corpus's, when they share one, else en."""
    corpus_ids = {inst.corpus_id for inst in instances}
    languages = set(Corpus.objects.filter(pk__in=corpus_ids).values_list("language", flat=True))
    return languages.pop() if len(languages) == 1 else "en"


def study_create(
    *, slug: str, item_kind: str, settings: StudySettings | None = None, setup: str | None = None,
    corpus: list[str] | None = None, component: list[str] | None = None,
    status: str | None = InstanceStatus.CANDIDATE, count: int | None = None, seed: int = 0,
    counts_per_component: dict[str, int] | None = None, items: list[dict[str, Any]] | None = None,
    questions: list[dict[str, Any]] | None = None, eligibility_questions: list[dict[str, Any]] | None = None,
    rewrite_min_length: int = 10, study_status: str = Study.Status.ACTIVE,
) -> Study:
    """Create a study and its items in one transaction; nothing is stored when any check fails.

    What the items are:
      - `item_kind` quadruple, triple or style-or-content: task instances of that `setup` drawn by `corpus`,
        `component` and `status` (None: any); `count` of them at random with `seed` (None: all), or
        `counts_per_component` (a sampling plan, annotation.services.sampling_plan); refused when
        `screening_per_batch` screening questions cannot be found for its components (services.screening).
      - likert, ranking, rewrite: `items`, already checked rows (`items_check`); likert needs `questions`.
    `settings` is a `StudySettings` (None: every default): the settings declared once, with their defaults, bounds,
    labels and help, in `annotation.services.study_settings.STUDY_SETTINGS`, checked by `study_settings_build` with
    their cross-field rules: 1 ≤ m (`min_correct`, default a strict majority) ≤ k (`annotators_per_item`, default
    5), a platform's entry rules, an http(s) `redirect_url`. Here: codes that differ (`study_codes`); `consent_text`,
    `eligibility_questions` and `task_description` None take the defaults; a study asking special-category
    questions needs `special_category_consent` (annotation.services.consent). `study_status` draft keeps it closed
    until `study_open`. Each error is an ApplicationError whose `field` is the keyword or setting at fault. The
    doors call `annotation.services.study_build.study_build`, which adds presets, files of outputs, sampling plans,
    practice items and rewrite studies on top of this.
    """
    if item_kind not in ItemKind.values:
        raise ApplicationError(f"Kind must be one of {ItemKind.values}, not {item_kind!r}.", field="item_kind")
    if settings is None:
        settings = study_settings_build(item_kind=item_kind)
    # A free-text answer's least characters: the rewrite setting's bounds (the column would refuse a negative one).
    study_setting_check(REWRITE_BY_NAME["min_length"], rewrite_min_length, field="rewrite_min_length")
    if count is not None and count < 1:
        raise ApplicationError(f"Count must be at least 1, not {count}.", field="count")
    _shown_text_check(eligibility_questions=eligibility_questions or [], questions=questions, items=items)
    special_category_check(questions=eligibility_questions or [], statement=settings.special_category_consent)
    if Study.objects.filter(slug=slug).exists():
        raise ApplicationError(f"A study with slug '{slug}' already exists.", code=CONFLICT, status=409)
    if item_kind in ORDERING_KINDS:
        instances, selection, task_description = _ordering_items(
            item_kind=item_kind, settings=settings, setup=setup, corpus=corpus, component=component, status=status,
            count=count, seed=seed, counts_per_component=counts_per_component)
        screening_per_batch = settings.screening_per_batch
    else:
        _given_items_check(item_kind=item_kind, items=items, questions=questions)
        instances, selection, task_description = [], {"count": count, "seed": seed}, settings.task_description
        screening_per_batch = 0
    # The study's language: as given, else its corpus's (ordering studies) or its items' (the others), else en.
    language = settings.language or (corpus_language(instances) if instances else language_normalise(
        str((items or [{}])[0].get("language") or "")) or "en")
    if eligibility_questions is None:  # the default question, in the study's language
        eligibility_questions = eligibility_default(language=language)
    completion_code, screened_out_code = study_codes(completion_code=settings.completion_code,
                                                     screened_out_code=settings.screened_out_code)
    columns = {
        **settings.columns(), "title": settings.title or slug, "screening_per_batch": screening_per_batch,
        "language": language,
        "consent_text": _default_consent(language) if settings.consent_text is None else settings.consent_text,
        "special_category_consent": settings.special_category_consent.strip(),
        "task_description": product_description(task_description or DESCRIPTIONS[item_kind], language=language),
        "completion_code": completion_code, "screened_out_code": screened_out_code,
    }
    with transaction.atomic():
        study = Study.objects.create(
            slug=slug, item_kind=item_kind, selection=selection, eligibility_questions=eligibility_questions,
            questions=product_questions(questions, language=language) or [], rewrite_min_length=rewrite_min_length,
            status=study_status, **columns,
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


def _ordering_items(
    *, item_kind: str, settings: StudySettings, setup: str | None, corpus: list[str] | None,
    component: list[str] | None, status: str | None, count: int | None, seed: int,
    counts_per_component: dict[str, int] | None,
) -> tuple[list[TaskInstance], dict[str, Any], str | None]:
    """An ordering study's task instances, the selection stored with it, and its task description."""
    setup = setup or item_kind
    if setup != item_kind or setup not in Setup.values:
        raise ApplicationError(f"Setup {setup!r} does not match the item kind {item_kind!r}.", field="setup")
    instances = instances_select(setup=setup, corpus=corpus, component=component, status=status, count=count,
                                 seed=seed, counts_per_component=counts_per_component)
    selection: dict[str, Any] = {"count": count, "seed": seed}
    if counts_per_component:
        selection["counts_per_component"] = counts_per_component
    if not instances:
        raise ApplicationError(
            f"No task instances match setup={setup} corpus={corpus} component={component} status={status}."
        )
    selection.update({"setup": setup, "corpus": corpus, "component": component, "status": status})
    component_ids = {inst.component_id for inst in instances}
    screening_require(item_kind=item_kind, component_ids=component_ids,
                      screening_per_batch=settings.screening_per_batch, language=instances[0].corpus.language)
    task_description = settings.task_description or task_description_compose(
        setup=setup, components=list(StyleComponent.objects.filter(pk__in=component_ids).order_by("name")),
        language=settings.language or corpus_language(instances))  # the study's language, as study_create sets it
    return instances, selection, task_description


def _given_items_check(*, item_kind: str, items: list[dict[str, Any]] | None,
                       questions: list[dict[str, Any]] | None) -> None:
    if not items:
        raise ApplicationError(f"A {item_kind} study needs items (a JSONL file of them).", field="items")
    if item_kind == ItemKind.LIKERT and not questions:
        raise ApplicationError("A likert study needs questions (a preset name or a JSON file).", field="questions")
