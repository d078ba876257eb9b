"""Build a content-error set, review it, and make a rating study (Pauli's two 5-point scales) from what was accepted."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import ItemKind, Study
from annotation.services.studies import QUESTION_PRESETS, study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from core.languages import primary_language
from scoring.content_errors.editors import ERROR_TYPES, ContentEdit, content_error_make
from scoring.content_errors.generative import ModelEditor
from scoring.content_errors.pairs import RewritePair
from scoring.error_codes import INVALID_DECISION, INVALID_ERROR_TYPE, NOTHING_ACCEPTED, UNSUPPORTED_LANGUAGE
from scoring.models import ContentError, ContentErrorSet
from tasks.error_codes import CONFLICT

Editor = Callable[[str, str, int], ContentEdit | None]
RULE_LANGUAGES = ("en",)  # the languages of the rule-based editors' word lists (scoring/content_errors/editors.py)


def _rules(text: str, error_type: str, seed: int) -> ContentEdit | None:
    return content_error_make(text=text, error_type=error_type, seed=seed)


def content_errors_generate(*, pairs: Sequence[RewritePair], error_types: Sequence[str], seed: int,
                            editor: Editor = _rules,
                            progress: Callable[[int, int], None] | None = None) -> tuple[list[dict[str, Any]], dict]:
    """The errors for every (pair, type), and what was skipped; no database access (the benchmark times this)."""
    bad = [t for t in error_types if t not in ERROR_TYPES]
    if bad or not error_types:
        raise ApplicationError(f"error types must be among {', '.join(ERROR_TYPES)}; got {', '.join(bad) or 'none'}",
                               code=INVALID_ERROR_TYPE)
    made: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for index, pair in enumerate(pairs):
        for error_type in error_types:
            edit = editor(pair.rewrite, error_type, seed)
            if edit is None:
                skipped[error_type] += 1
                continue
            erroneous = edit.apply(pair.rewrite).strip()
            if not erroneous or erroneous == pair.rewrite:
                skipped[error_type] += 1
                continue
            made.append({"pair": pair, "error_type": error_type, "edit": edit, "erroneous": erroneous})
        if progress and (index % 200 == 0 or index == len(pairs) - 1):
            progress(index + 1, len(pairs))
    return made, {"skipped": dict(skipped)}


def content_error_set_build(*, name: str, pairs: Sequence[RewritePair], source: str, error_types: Sequence[str],
                            seed: int = 0, model_path: str = "", created_by: str = "", language: str = "en",
                            progress: Callable[[int, int], None] | None = None) -> ContentErrorSet:
    """Generate one error of each asked type per pair (rule-based, or by the local model at `model_path`) and store
    them pending review. Pairs an editor finds nothing to change in are counted as skipped. The rule-based editors
    are English (their word lists: number words, months, weekdays, determiners, prepositions): a `language` other
    than English needs a model (`model_path`, one that writes that language)."""
    if ContentErrorSet.objects.filter(name=name).exists():
        raise ApplicationError(f"a content-error set named {name!r} already exists", code=CONFLICT, status=409)
    if not model_path and primary_language(language) not in RULE_LANGUAGES:
        raise ApplicationError(
            f"the rule-based content-error editors use English word lists (number words, months, weekdays, "
            f"determiners, prepositions) and would make no sensible error in {language} text: give a local model "
            f"that writes {language} (--model DIR), or write the erroneous rewrites yourself",
            code=UNSUPPORTED_LANGUAGE, field="language")
    editor: Editor = _rules
    if model_path:

        model = ModelEditor(path=model_path)
        editor = lambda text, error_type, s: model.make(text=text, error_type=error_type, seed=s)  # noqa: E731
    made, info = content_errors_generate(pairs=pairs, error_types=error_types, seed=seed, editor=editor,
                                         progress=progress)
    per_type = Counter(m["error_type"] for m in made)
    summary = {"pairs": len(pairs), "errors": len(made), "per_type": {t: per_type.get(t, 0) for t in error_types},
               "skipped": {t: info["skipped"].get(t, 0) for t in error_types}}
    with transaction.atomic():
        error_set = ContentErrorSet.objects.create(
            name=name, source=source, error_types=list(error_types), generator=model_path or "rules", seed=seed,
            summary=summary, created_by=created_by)
        ContentError.objects.bulk_create([
            ContentError(error_set=error_set, pair_id=m["pair"].pair_id, source=m["pair"].source,
                         rewrite=m["pair"].rewrite, erroneous=m["erroneous"], target_style=m["pair"].target_style,
                         error_type=m["error_type"], rule=m["edit"].rule,
                         edit={"start": m["edit"].start, "end": m["edit"].end, "before": m["edit"].before,
                               "after": m["edit"].after})
            for m in made
        ], batch_size=2000)
    return error_set


def content_errors_review(*, error_ids: Sequence[int], decision: str, reviewer: str) -> int:
    """Accept or reject generated errors (the researcher's review before raters see them); returns how many."""
    if decision not in (ContentError.Review.ACCEPTED, ContentError.Review.REJECTED, ContentError.Review.PENDING):
        raise ApplicationError(f"decision must be accepted, rejected or pending, not {decision!r}",
                               code=INVALID_DECISION)
    with transaction.atomic():
        return ContentError.objects.filter(pk__in=list(error_ids)).update(
            review=decision, reviewed_by=reviewer, reviewed_at=timezone.now())


def content_error_study_create(*, error_set: ContentErrorSet, slug: str, annotators_per_item: int = 3,
                               items_per_batch: int = 14, **study_options: Any) -> Study:
    """A Likert study on Pauli's two 5-point scales: per accepted error, its good rewrite and the rewrite with the
    error (each good rewrite once), shown as (source, rewrite) items; `system` says which is which, never shown."""
    with transaction.atomic():
        error_set = ContentErrorSet.objects.select_for_update().get(pk=error_set.pk)
        if error_set.study_id is not None:
            raise ApplicationError(f"set {error_set.name!r} already has the study {error_set.study.slug!r}",
                                   code=CONFLICT, status=409)
        accepted = list(error_set.errors.filter(review=ContentError.Review.ACCEPTED).order_by("pk"))
        if not accepted:
            raise ApplicationError(f"set {error_set.name!r} has no accepted errors: review them first",
                                   code=NOTHING_ACCEPTED)
        items: list[dict[str, Any]] = []
        good_seen: set[str] = set()
        for error in accepted:
            if error.pair_id not in good_seen:
                good_seen.add(error.pair_id)
                items.append({"id": f"{error.pair_id}:good", "source": error.source, "rewrite": error.rewrite,
                              "target_style": error.target_style, "system": "good", "pair": error.pair_id})
            items.append({"id": f"{error.pair_id}:{error.error_type}", "source": error.source,
                          "rewrite": error.erroneous, "target_style": error.target_style,
                          "system": f"content-error:{error.error_type}", "pair": error.pair_id,
                          "content_error": error.pk})
        # Any further keyword is a declared study setting (annotation.services.study_settings), checked there.
        settings = study_settings_build(item_kind=ItemKind.LIKERT, title=f"Content errors: {error_set.name}",
                                        annotators_per_item=annotators_per_item, items_per_batch=items_per_batch,
                                        **study_options)
        study = study_create(slug=slug, item_kind=ItemKind.LIKERT, items=items, questions=QUESTION_PRESETS["pauli"],
                             settings=settings)
        error_set.study = study
        error_set.save(update_fields=["study"])
    return study
