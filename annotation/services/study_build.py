"""The one service the three doors (admin "Create a study", `POST /api/v1/studies/`, `create_study`) call to set a
study up, of every kind: ordering studies drawn from task instances (with an optional sampling plan and practice
items), Likert and ranking studies (items, a file of system outputs, or the accepted rewrites of a rewrite study; a
rating preset), and rewrite studies (reviewed, over sources given or taken from a corpus side). Each door only reads
its input (a file, an upload, a JSON body) into these arguments; every check is here or below."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.models import ORDERING_KINDS, ItemKind, Study
from annotation.services.practice import practice_items_set
from annotation.services.rating_presets import (
    rating_items_build,
    rating_items_from_rewrite_study,
    rating_preset_get,
)
from annotation.services.rewrites import rewrite_study_create, sources_check, sources_from_corpus
from annotation.services.sampling_plan import sampling_plan_compute
from annotation.services.studies import QUESTION_PRESETS, items_check, questions_validate, study_create
from annotation.services.study_settings import ORDERING, SETTINGS_BY_NAME
from core.errors import ApplicationError


@dataclass(frozen=True)
class StudyInput:
    """An input that says what a study's items are (not a setting): each door spells it in its own way."""

    name: str
    kinds: str
    help: str


# What the items are made of; the setting table is annotation.services.study_settings.STUDY_SETTINGS. The parity
# test (tests/annotation/test_study_settings.py) checks that every door offers each of these.
STUDY_INPUTS: tuple[StudyInput, ...] = (
    StudyInput("kind", "all", "quadruple, triple, style-or-content (ordering), likert, ranking or rewrite"),
    StudyInput("corpus", "ordering", "corpora the instances come from (empty: every corpus)"),
    StudyInput("component", "ordering", "style components (empty: every component)"),
    StudyInput("status", "ordering", "instance status: candidate, validated or any"),
    StudyInput("count", "ordering", "instances drawn at random (empty: all)"),
    StudyInput("seed", "ordering", "the same seed draws the same instances"),
    StudyInput("target_validated", "ordering", "sampling plan: validated instances wanted per component"),
    StudyInput("validation_rates", "ordering", "sampling plan: expected validation rate per component"),
    StudyInput("rates_from_studies", "ordering", "sampling plan: earlier studies the rates are measured on"),
    StudyInput("practice", "ordering", "practice items shown with feedback before the first batch"),
    StudyInput("items", "likert ranking rewrite", "the items, one object each"),
    StudyInput("outputs", "likert ranking", "system outputs (id, source, rewrite[, system]) to rate or rank"),
    StudyInput("outputs_study", "likert ranking", "a rewrite study whose accepted rewrites are rated or ranked"),
    StudyInput("preset", "likert ranking", "rating preset: gyafc or pauli"),
    StudyInput("questions", "likert", "Likert questions: a preset name or the list"),
    StudyInput("eligibility_questions", "all", "eligibility questions (empty list: none)"),
    StudyInput("rewrite", "rewrite", "a reviewed rewrite study's sources and settings"),
)
STATUS_ANY = "any"


@dataclass
class StudyBuilt:
    study: Study
    sampling_plan: dict[str, Any] | None = None
    practice_items: int = 0
    sources: dict[str, Any] | None = None  # a rewrite study's preprocessing summary


def study_items_source_check(*, items: Any, outputs: Any, outputs_study: Any) -> None:
    """A Likert/ranking study's items come from one of items, outputs and outputs study (a door may call this
    before it reads the files)."""
    given = [name for name, value in (("items", items), ("outputs", outputs), ("outputs_study", outputs_study))
             if value]
    if len(given) > 1:
        raise ApplicationError(f"Give one of items, outputs and outputs study, not several ({' and '.join(given)}).",
                               field=given[1])


def study_build(  # noqa: C901 split with the study door's settings object
    *, slug: str, kind: str, setup: str | None = None, corpus: list[str] | None = None,
    component: list[str] | None = None, status: str | None = "candidate", count: int | None = None, seed: int = 0,
    items: list[Any] | None = None, outputs: list[tuple[int, dict[str, Any]]] | None = None,
    outputs_where: str = "Outputs", outputs_study: str = "", preset: str = "",
    questions: str | list[dict[str, Any]] | None = None, eligibility_questions: list[dict[str, Any]] | None = None,
    target_validated: int | None = None, validation_rates: dict[str, float] | None = None,
    rates_from_studies: list[str] | tuple[str, ...] = (), practice: list[Any] | None = None,
    rewrite: dict[str, Any] | None = None, study_status: str = Study.Status.ACTIVE, **settings: Any,
) -> StudyBuilt:
    """Create a study of any kind with everything it is set up with, in one transaction.

    `kind`: an item kind (quadruple, triple, style-or-content, likert, ranking, rewrite); `setup` must match an
    ordering kind (default: the kind). `status` "any" (or None) takes instances of every status. Likert/ranking
    items come from one of `items` (checked rows), `outputs` ((row number, record) pairs of a CSV/TSV/JSONL of system
    outputs, named `outputs_where` in errors) or `outputs_study` (a rewrite study's accepted rewrites); `preset`
    (gyafc, pauli) gives questions, k and a description where they are not given. `questions` is a preset name or a
    list. A sampling plan (`target_validated` with `validation_rates` and/or `rates_from_studies`) sizes each
    component's sample. `practice` items need an ordering kind. A reviewed rewrite study takes `rewrite`: {sources
    [(id, text)] | sources_corpus + side, target_style, filters, examples, min_length, max_length, copy_threshold,
    persona, min_accepted, min_rate, signal_thresholds, signal_auto_reject}. `settings` are the declared study
    settings (annotation.services.study_settings), passed to `study_create` which checks them."""

    if kind == "ordering":  # the admin's and API's older spelling: an ordering study of `setup`
        kind = setup or ""
    if kind not in ItemKind.values:
        raise ApplicationError(f"Kind must be one of {', '.join(ItemKind.values)}, not {kind!r}."
                               if kind else "An ordering study needs a setup (quadruple, triple, style-or-content).",
                               field="setup" if not kind else "kind")
    ordering = kind in ORDERING_KINDS
    status = None if status == STATUS_ANY else status
    if not ordering:
        for name, value in (("target_validated", target_validated), ("practice", practice)):
            if value is not None:
                raise ApplicationError(f"{name.replace('_', ' ').capitalize()}: only for ordering studies "
                                       f"(quadruple, triple, style-or-content), not {kind}.", field=name)
    if kind != ItemKind.REWRITE and rewrite is not None:
        raise ApplicationError(f"Rewrite settings: only for rewrite studies, not {kind}.", field="rewrite")
    study_items_source_check(items=items, outputs=outputs, outputs_study=outputs_study)
    if ordering:
        given = [name for name, value in (("items", items), ("outputs", outputs), ("outputs_study", outputs_study),
                                          ("preset", preset), ("questions", questions)) if value]
        if given:
            raise ApplicationError(f"{given[0].replace('_', ' ').capitalize()}: only for likert, ranking and "
                                   f"rewrite studies; a {kind} study draws task instances.", field=given[0])
    if kind == ItemKind.REWRITE and rewrite is not None:
        if items or outputs or outputs_study:
            raise ApplicationError("A reviewed rewrite study takes its sources, not items.", field="items")
        return _rewrite_build(slug=slug, rewrite=rewrite, eligibility_questions=eligibility_questions,
                              study_status=study_status, settings=settings)

    chosen = rating_preset_get(preset=preset, kind=kind) if preset else {}
    if items is not None and not ordering:
        items = items_check(rows=list(enumerate(items, start=1)), kind=kind, where="Items", unit="item")
    if outputs:
        items = rating_items_build(records=outputs, kind=kind, where=outputs_where)
    if outputs_study:
        items = rating_items_from_rewrite_study(study_slug=outputs_study, kind=kind)
    if isinstance(questions, str):
        if questions not in QUESTION_PRESETS:
            raise ApplicationError(f"Questions: {questions!r} is not a preset ({', '.join(sorted(QUESTION_PRESETS))}).",
                                   field="questions")
        questions = QUESTION_PRESETS[questions]
    elif questions is not None:
        questions = questions_validate(questions, where="Questions")
    questions = questions or chosen.get("questions")
    if settings.get("annotators_per_item") is None and "annotators_per_item" in chosen:
        settings["annotators_per_item"] = chosen["annotators_per_item"]
    if not settings.get("task_description") and chosen.get("task_description"):
        settings["task_description"] = chosen["task_description"]
    if eligibility_questions is not None and not all(isinstance(q, dict) and q.get("name") and isinstance(
            q.get("choices"), list) for q in eligibility_questions):
        raise ApplicationError("Eligibility questions: each needs a name and a list of choices "
                               "({name, text, choices, accept}).", field="eligibility_questions")
    plan = None
    if target_validated is not None:
        plan = sampling_plan_compute(setup=setup or kind, components=component or [],
                                     target_validated=target_validated, rates=validation_rates or {},
                                     rates_from_studies=list(rates_from_studies), corpus=corpus, status=status)
    with transaction.atomic():
        study = study_create(
            slug=slug, item_kind=kind, setup=setup if ordering else None, corpus=corpus, component=component,
            status=status, count=count, seed=seed, items=items, questions=questions,
            eligibility_questions=eligibility_questions, study_status=study_status,
            counts_per_component={name: entry["sample"] for name, entry in plan["components"].items()}
            if plan else None, **settings,
        )
        practiced = practice_items_set(study=study, items=practice) if practice is not None else 0
    return StudyBuilt(study=study, sampling_plan=plan, practice_items=practiced)


REWRITE_KEYS = ("target_style", "filters", "examples", "min_length", "max_length", "copy_threshold", "persona",
                "min_accepted", "min_rate", "signal_thresholds", "signal_auto_reject")


def _rewrite_build(*, slug: str, rewrite: dict[str, Any], eligibility_questions: list[dict[str, Any]] | None,
                   study_status: str, settings: dict[str, Any]) -> StudyBuilt:

    sources, corpus_name, side = rewrite.get("sources"), rewrite.get("sources_corpus") or "", rewrite.get("side")
    if (sources is None) == (not corpus_name):
        raise ApplicationError("Give the sources, or a corpus and its side (one of the two).",
                               field="sources")
    if corpus_name:
        if side is None:
            raise ApplicationError("Side: choose the side of the corpus the sources are taken from (1 or 2).",
                                   field="side")
        rows = sources_from_corpus(name=corpus_name, side=side)
    else:
        rows = sources_check(sources=sources, where="Sources")
    unknown = sorted(set(rewrite) - {*REWRITE_KEYS, "sources", "sources_corpus", "side"})
    if unknown:
        raise ApplicationError(f"Rewrite settings: unknown {', '.join(unknown)}.", field="rewrite")
    options = {key: rewrite[key] for key in REWRITE_KEYS if rewrite.get(key) is not None}
    kept = {name: value for name, value in settings.items()
            if name not in SETTINGS_BY_NAME or SETTINGS_BY_NAME[name].kinds != ORDERING}
    study, summary = rewrite_study_create(slug=slug, sources=rows, eligibility_questions=eligibility_questions,
                                          study_status=study_status, **options, **kept)
    return StudyBuilt(study=study, sources=summary)
