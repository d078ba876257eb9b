"""The one service the three doors (admin "Create a study", `POST /api/v1/studies/`, `create_study`) call to set a
study up, of every kind: ordering studies drawn from task instances (with an optional sampling plan and practice
items), Likert and ranking studies (items, a file of system outputs, or the accepted rewrites of a rewrite study; a
rating preset), and rewrite studies (reviewed, over sources given or taken from a corpus side). Each door only reads
its input (a file, an upload, a JSON body) into these arguments; every check is here or below."""
from __future__ import annotations

from collections.abc import Callable
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
from annotation.services.rewrites import corpus_language, rewrite_study_create, sources_check, sources_from_corpus
from annotation.services.sampling_plan import sampling_plan_compute
from annotation.services.studies import QUESTION_PRESETS, items_check, questions_validate, study_create
from annotation.services.study_settings import ORDERING, SETTINGS_BY_NAME, StudySettings, study_settings_build
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


@dataclass
class StudyRequest:
    """What a door asked for, once its kind is known: the inputs of `study_build` that its builders read."""

    slug: str
    kind: str
    setup: str | None
    corpus: list[str] | None
    component: list[str] | None
    status: str | None
    count: int | None
    seed: int
    items: list[Any] | None
    outputs: list[tuple[int, dict[str, Any]]] | None
    outputs_where: str
    outputs_study: str
    preset: str
    questions: str | list[dict[str, Any]] | None
    eligibility_questions: list[dict[str, Any]] | None
    target_validated: int | None
    validation_rates: dict[str, float] | None
    rates_from_studies: list[str] | tuple[str, ...]
    practice: list[Any] | None
    rewrite: dict[str, Any] | None
    study_status: str
    extra: dict[str, Any]  # the declared settings as given (annotation.services.study_settings), and rewrite_min_length


def study_build(
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
    settings (annotation.services.study_settings), built into one `StudySettings` by `study_settings_build` (which
    checks them) once a preset has filled in what it gives; `rewrite_min_length` may come with them.

    Each kind has its builder (`BUILDERS`): ordering studies, rated or ranked items, reviewed rewrite studies."""
    kind = _kind_resolve(kind=kind, setup=setup)
    request = StudyRequest(
        slug=slug, kind=kind, setup=setup, corpus=corpus, component=component,
        status=None if status == STATUS_ANY else status, count=count, seed=seed, items=items, outputs=outputs,
        outputs_where=outputs_where, outputs_study=outputs_study, preset=preset, questions=questions,
        eligibility_questions=eligibility_questions, target_validated=target_validated,
        validation_rates=validation_rates, rates_from_studies=rates_from_studies, practice=practice,
        rewrite=rewrite, study_status=study_status, extra=settings,
    )
    _inputs_of_kind_check(request)
    return BUILDERS[kind](request)


def _kind_resolve(*, kind: str, setup: str | None) -> str:
    if kind == "ordering":  # the admin's and API's older spelling: an ordering study of `setup`
        kind = setup or ""
    if kind not in ItemKind.values:
        raise ApplicationError(f"Kind must be one of {', '.join(ItemKind.values)}, not {kind!r}."
                               if kind else "An ordering study needs a setup (quadruple, triple, style-or-content).",
                               field="setup" if not kind else "kind")
    return kind


def _inputs_of_kind_check(request: StudyRequest) -> None:
    """Refuse an input that the study's kind does not take, naming it."""
    kind = request.kind
    if kind in ORDERING_KINDS:
        study_items_source_check(items=request.items, outputs=request.outputs, outputs_study=request.outputs_study)
        given = [name for name in ("items", "outputs", "outputs_study", "preset", "questions")
                 if getattr(request, name)]
        if given:
            raise ApplicationError(f"{given[0].replace('_', ' ').capitalize()}: only for likert, ranking and "
                                   f"rewrite studies; a {kind} study draws task instances.", field=given[0])
        return
    for name in ("target_validated", "practice"):
        if getattr(request, name) is not None:
            raise ApplicationError(f"{name.replace('_', ' ').capitalize()}: only for ordering studies "
                                   f"(quadruple, triple, style-or-content), not {kind}.", field=name)
    if kind != ItemKind.REWRITE and request.rewrite is not None:
        raise ApplicationError(f"Rewrite settings: only for rewrite studies, not {kind}.", field="rewrite")
    study_items_source_check(items=request.items, outputs=request.outputs, outputs_study=request.outputs_study)


def _settings(request: StudyRequest, **preset: Any) -> tuple[StudySettings, dict[str, Any]]:
    """The study's settings (a preset's values where none is given) and the keywords study_create takes besides."""
    given = dict(request.extra)
    extra = {"rewrite_min_length": given.pop("rewrite_min_length")} if "rewrite_min_length" in given else {}
    for name, value in preset.items():
        if not given.get(name):
            given[name] = value
    return study_settings_build(item_kind=request.kind, **given), extra


def _eligibility_check(questions: list[dict[str, Any]] | None) -> None:
    if questions is not None and not all(isinstance(q, dict) and q.get("name") and isinstance(
            q.get("choices"), list) for q in questions):
        raise ApplicationError("Eligibility questions: each needs a name and a list of choices "
                               "({name, text, choices, accept}).", field="eligibility_questions")


def _ordering_build(request: StudyRequest) -> StudyBuilt:
    """Task instances of the setup, with an optional sampling plan and practice items."""
    settings, extra = _settings(request)
    _eligibility_check(request.eligibility_questions)
    plan = None
    if request.target_validated is not None:
        plan = sampling_plan_compute(setup=request.setup or request.kind, components=request.component or [],
                                     target_validated=request.target_validated, rates=request.validation_rates or {},
                                     rates_from_studies=list(request.rates_from_studies), corpus=request.corpus,
                                     status=request.status)
    with transaction.atomic():
        study = study_create(
            slug=request.slug, item_kind=request.kind, settings=settings, setup=request.setup, corpus=request.corpus,
            component=request.component, status=request.status, count=request.count, seed=request.seed,
            eligibility_questions=request.eligibility_questions, study_status=request.study_status,
            counts_per_component={name: entry["sample"] for name, entry in plan["components"].items()}
            if plan else None, **extra,
        )
        practiced = practice_items_set(study=study, items=request.practice) if request.practice is not None else 0
    return StudyBuilt(study=study, sampling_plan=plan, practice_items=practiced)


def _rated_build(request: StudyRequest) -> StudyBuilt:
    """Likert and ranking studies (and rewrite items given as they are): items, a file of system outputs or a
    rewrite study's accepted rewrites, with a rating preset's questions, k and description where none is given."""
    kind = request.kind
    chosen = rating_preset_get(preset=request.preset, kind=kind) if request.preset else {}
    items = request.items
    if items is not None:
        items = items_check(rows=list(enumerate(items, start=1)), kind=kind, where="Items", unit="item")
    if request.outputs:
        items = rating_items_build(records=request.outputs, kind=kind, where=request.outputs_where)
    if request.outputs_study:
        items = rating_items_from_rewrite_study(study_slug=request.outputs_study, kind=kind)
    questions = _questions(request.questions) or chosen.get("questions")
    settings, extra = _settings(request, **{name: chosen[name] for name in ("annotators_per_item", "task_description")
                                            if chosen.get(name)})
    _eligibility_check(request.eligibility_questions)
    study = study_create(slug=request.slug, item_kind=kind, settings=settings, status=request.status,
                         count=request.count, seed=request.seed, items=items, questions=questions,
                         eligibility_questions=request.eligibility_questions, study_status=request.study_status,
                         **extra)
    return StudyBuilt(study=study)


def _questions(questions: str | list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Likert questions: a preset's name or the list, checked."""
    if isinstance(questions, str):
        if questions not in QUESTION_PRESETS:
            raise ApplicationError(f"Questions: {questions!r} is not a preset ({', '.join(sorted(QUESTION_PRESETS))}).",
                                   field="questions")
        return QUESTION_PRESETS[questions]
    if questions is not None:
        return questions_validate(questions, where="Questions")
    return None


REWRITE_KEYS = ("target_style", "filters", "examples", "min_length", "max_length", "copy_threshold", "persona",
                "persona_from_platform", "min_accepted", "min_rate", "signal_thresholds", "signal_auto_reject")


def _rewrite_build(request: StudyRequest) -> StudyBuilt:
    """A reviewed rewrite study over sources given or taken from a corpus side; without `rewrite`, items as given."""
    if request.rewrite is None:
        return _rated_build(request)
    if request.items or request.outputs or request.outputs_study:
        raise ApplicationError("A reviewed rewrite study takes its sources, not items.", field="items")
    rewrite = request.rewrite
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
    unknown = sorted(set(rewrite) - {*REWRITE_KEYS, "sources", "sources_corpus", "side", "language"})
    if unknown:
        raise ApplicationError(f"Rewrite settings: unknown {', '.join(unknown)}.", field="rewrite")
    options = {key: rewrite[key] for key in REWRITE_KEYS if rewrite.get(key) is not None}
    # An ordering study's settings (screening, adaptive collection, several setups) do not apply to it.
    kept = {name: value for name, value in request.extra.items()
            if name not in SETTINGS_BY_NAME or SETTINGS_BY_NAME[name].kinds != ORDERING}
    settings = study_settings_build(item_kind=request.kind, **kept)
    # The study's language as given (`language`), else the sources' (the body's `rewrite.language`, the corpus's), else
    # en: it counts the words, writes the default eligibility, persona questions and instructions, tags the items.
    language = settings.language or str(rewrite.get("language") or "") or (
        corpus_language(name=corpus_name) if corpus_name else "en")
    study, summary = rewrite_study_create(slug=request.slug, sources=rows,
                                          eligibility_questions=request.eligibility_questions,
                                          study_status=request.study_status, settings=settings,
                                          language=language, **options)
    return StudyBuilt(study=study, sources=summary)


BUILDERS: dict[str, Callable[[StudyRequest], StudyBuilt]] = {
    ItemKind.QUADRUPLE: _ordering_build, ItemKind.TRIPLE: _ordering_build, ItemKind.STYLE_OR_CONTENT: _ordering_build,
    ItemKind.LIKERT: _rated_build, ItemKind.RANKING: _rated_build, ItemKind.REWRITE: _rewrite_build,
}
