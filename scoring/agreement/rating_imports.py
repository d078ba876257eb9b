"""import_annotations with the items' texts: ratings of rewrites collected elsewhere, in as a Likert study on which
agreement, evaluate_metrics and the dataset card work as on a study run here.

Two shapes. (1) An items file (JSONL, CSV or TSV: `id`, `source`, `rewrite`, optional `reference`, `system`,
`target_style`, `dataset`, `language`) beside a long ratings file (`item`, `annotator`, `question`, `value`;
several questions in one file). (2) One wide CSV per dataset, the shape of Pauli et al.'s release (one row per
rewrite with `input`, `output`, `reference`, `style_to`, `system`, and one column per rater per question: `c-1`,
`c-2`, `s-1`, ...); a `WideMapping` names the columns and `wide_read` reads it (`scoring/agreement/wide_ratings.py`;
its `rater_ids` store each rating under the rater's own id instead of the column's position). A question whose name
is one of the presets' (`style_strength`, `content_preservation`, `style_change`, `fluency`, `meaning`, `formality`)
takes the preset's text and labels.

The texts (`source`, `rewrite`, `reference`) are stored exactly as the file gives them, outer spaces included, so
that metrics reading characters score the strings the release's own code scored; the other fields are trimmed.

Every file is read and every bad line named (file, line, column) before anything is stored; then one transaction.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.models import ItemKind, Response
from annotation.services.studies import QUESTION_PRESETS
from core.errors import ApplicationError
from scoring.agreement.imports import (
    Row,
    _annotators_import,
    _bad_rows,
    _file_text,
    _items_import,
    _read_rows,
    _refuse_erased,
    _responses_build,
    _study_for_import,
    levels_check,
)
from scoring.agreement.stats.scales import scale_parse
from scoring.agreement.wide_ratings import ITEM_FIELDS, TEXT_FIELDS, WideMapping, _field, wide_read
from scoring.error_codes import ITEM_TEXT_MISMATCH, NOT_NUMERIC_SCALE
from tasks.error_codes import EMPTY_FILE, MISSING_COLUMNS
from tasks.services.parsers import records_read

__all__ = ["ITEM_FIELDS", "TEXT_FIELDS", "RatingsImport", "WideMapping", "items_read", "ratings_import",
           "ratings_import_upload", "wide_read"]
REQUIRED_ITEM_FIELDS = ("id", "source", "rewrite")


def preset_questions() -> dict[str, dict[str, Any]]:
    """Every preset question by name (the first preset that names it wins): what an imported question takes."""
    named: dict[str, dict[str, Any]] = {}
    for questions in QUESTION_PRESETS.values():
        for question in questions:
            named.setdefault(question["name"], question)
    return named


def items_read(*, path: Path) -> dict[str, dict[str, str]]:
    """The items file: {id: payload}; every bad line named by file, line and column."""
    records = records_read(path, _file_text(path), unknown_type=f"{path}: items are read from .jsonl, .csv or "
                                                                f".tsv files, not '{path.suffix.lower()}'")
    if records and path.suffix.lower() != ".jsonl":
        missing = [c for c in REQUIRED_ITEM_FIELDS if c not in records[0][1]]
        if missing:
            raise ApplicationError(f"{path}:1: missing column(s) {', '.join(missing)} (have: "
                                   f"{', '.join(records[0][1])})", code=MISSING_COLUMNS)
    items: dict[str, dict[str, str]] = {}
    first_line: dict[str, int] = {}
    errors = []
    for line, record in records:
        values = {key: _field(key, record.get(key)) for key in ("id", *ITEM_FIELDS)}
        problems = [f"column '{c}': empty" for c in REQUIRED_ITEM_FIELDS if not values[c].strip()]
        if values["id"] in first_line:
            problems.append(f"column 'id': {values['id']!r} repeats line {first_line[values['id']]}")
        if problems:
            errors.append(f"{path}:{line}: " + "; ".join(problems))
            continue
        first_line[values["id"]] = line
        items[values["id"]] = {key: values[key] for key in ITEM_FIELDS if values[key].strip()}
    if errors:
        raise _bad_rows(errors)
    if not items:
        raise ApplicationError(f"{path}: no items", code=EMPTY_FILE)
    return items


def _long_read(*, items_path: Path, ratings_path: Path, question: str, numeric: bool, domain: list
               ) -> tuple[dict[str, dict[str, str]], list[Row]]:
    items = items_read(path=items_path)
    rows = _read_rows(path=ratings_path, question=question, numeric=numeric, domain=domain)
    errors = [f"{ratings_path}:{row.line}: column 'item': {row.item!r} is not an item of {items_path}"
              for row in rows if row.item not in items]
    errors += [f"{ratings_path}:{row.line}: column 'question': empty, and no --question given"
               for row in rows if not row.question]
    if errors:
        raise _bad_rows(errors)
    return items, rows


def _question_specs(rows: list[Row], *, level: str, domain: list, path: Path) -> dict[str, dict[str, Any]]:
    """Each question's stored spec: the preset's text and labels where the name is a preset's on the same scale."""
    presets = preset_questions()
    specs = {}
    for name in dict.fromkeys(row.question for row in rows):
        spec: dict[str, Any] = {"name": name, "text": name, "level": level, "source": str(path),
                                "min": domain[0], "max": domain[-1]}
        preset = presets.get(name)
        if preset and (preset["min"], preset["max"]) == (domain[0], domain[-1]):
            spec.update({"text": preset["text"], "labels": preset.get("labels", {})})
        specs[name] = spec
    return specs


@dataclass(frozen=True)
class RatingsImport:
    """What `ratings_import` reads: the study, the scale and either (items, ratings) or one wide file."""

    study_slug: str
    scale: str
    ratings_path: Path
    items_path: Path | None = None
    wide: WideMapping | None = None
    dataset: str = ""  # every item's dataset, where no column gives it
    language: str = ""  # every item's language (BCP-47), where no column gives it
    question: str = ""
    level: str = ""
    source_name: str = ""  # the ratings file's name as recorded (an upload's name; default: ratings_path)


def ratings_import(*, request: RatingsImport, progress: Callable[[int, int], None] | None = None
                   ) -> dict[str, Any]:
    """Read and check every file, then store the study, its items with their texts, annotators and ratings in one
    transaction (nothing is stored when any line is bad)."""
    numeric, domain = scale_parse(request.scale)
    if not numeric:
        raise ApplicationError(f"ratings of rewrites take a numeric scale (e.g. 1-5), not {request.scale!r}",
                               code=NOT_NUMERIC_SCALE, field="scale")
    level = levels_check(level=request.level, numeric=numeric, scale=request.scale)
    ratings_path = Path(request.ratings_path)
    if request.wide is not None:
        items, rows = wide_read(path=ratings_path, mapping=request.wide, numeric=numeric, domain=domain)
    elif request.items_path is not None:
        items, rows = _long_read(items_path=Path(request.items_path), ratings_path=ratings_path,
                                 question=request.question.strip(), numeric=numeric, domain=domain)
    else:
        raise ApplicationError("give the items file (--items) or read the ratings file as wide (--wide)",
                               code=MISSING_COLUMNS, field="items")
    given = {"dataset": request.dataset.strip(), "language": request.language.strip()}
    items = {key: {**{k: v for k, v in given.items() if v}, **payload} for key, payload in items.items()}
    _refuse_erased(path=ratings_path, rows=rows)
    summary = _store(request=request, items=items, rows=rows, level=level, domain=domain, progress=progress)
    # Whom the ratings are stored under: the raters' own ids, or (a wide file without rater ids) column positions.
    positional = request.wide is not None and not request.wide.rater_ids
    return {**summary, "annotators": len({row.annotator for row in rows}),
            "annotator_ids": "positions" if positional else "people"}


@transaction.atomic
def _store(*, request: RatingsImport, items: dict[str, dict[str, str]], rows: list[Row], level: str, domain: list,
           progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    # What the study and each response record as their source: the file as the user named it (an upload's own name).
    ratings_path = Path(request.source_name or request.ratings_path)
    specs = _question_specs(rows, level=level, domain=domain, path=ratings_path)
    per_item: dict[tuple[str, str], int] = {}
    for row in rows:
        per_item[(row.item, row.question)] = per_item.get((row.item, row.question), 0) + 1
    study, created = _study_for_import(study_slug=request.study_slug, path=ratings_path, kind=ItemKind.LIKERT,
                                       k=max(per_item.values()), question_names=list(specs),
                                       spec_base={"level": level, "source": str(ratings_path), "min": domain[0],
                                                  "max": domain[-1]}, specs=specs)
    # Every item of the items file is stored, rated or not, in the file's order.
    item_rows = [Row(line=0, item=key, annotator="", question="", answer="", value=None, item_text="", correct="")
                 for key in items]
    by_id, new_items = _items_import(study, item_rows, kind=ItemKind.LIKERT, path=ratings_path, payloads=items)
    _texts_agree(by_id=by_id, items=items, new_items=new_items, study_slug=request.study_slug)
    people, new_people = _annotators_import(study, rows)
    responses = _responses_build(study, rows, items=by_id, people=people, path=ratings_path, progress=progress)
    Response.objects.bulk_create(responses, batch_size=5000)
    return {
        "study": study.slug, "created": created, "questions": list(specs), "scale": request.scale, "level": level,
        "items_created": len(new_items), "items": len(items), "annotators_created": len(new_people),
        "responses": len(responses), "annotators_per_item": study.annotators_per_item,
        "datasets": sorted({p["dataset"] for p in items.values() if p.get("dataset")}),
    }


def _texts_agree(*, by_id: dict[str, Any], items: dict[str, dict[str, str]], new_items: list[Any],
                 study_slug: str) -> None:
    """An item imported before keeps its texts: a file that gives it others is refused (nothing stored)."""
    new = {item.external_id for item in new_items}
    for key, payload in items.items():
        if key in new:
            continue
        stored = {k: v for k, v in (by_id[key].payload or {}).items() if k in ITEM_FIELDS}
        if stored != payload:
            raise ApplicationError(f"study '{study_slug}': item {key!r} was imported before with other texts "
                                   f"({stored.get('rewrite', '')!r}); import into a new slug",
                                   code=ITEM_TEXT_MISMATCH, status=409)



def ratings_import_upload(*, request: RatingsImport, ratings: Any, items: Any = None) -> dict[str, Any]:
    """The admin's and the API's door: uploaded files (Django `UploadedFile`s) are written under their own names to
    a temporary folder, imported with `ratings_import`, and errors name the files as uploaded (not the folder)."""
    with tempfile.TemporaryDirectory(prefix="ratings-import-") as folder:
        def saved(upload: Any) -> Path:
            path = Path(folder) / Path(str(upload.name or "upload.csv")).name
            with path.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            return path

        ratings_path = saved(ratings)
        items_path = saved(items) if items is not None else None
        if items_path is not None and items_path == ratings_path:
            raise ApplicationError("the items file and the ratings file must have different names",
                                   code=MISSING_COLUMNS, field="items")
        try:
            return ratings_import(request=replace(request, ratings_path=ratings_path, items_path=items_path,
                                                  source_name=ratings_path.name))
        except ApplicationError as exc:
            exc.message = exc.message.replace(f"{folder}/", "")
            exc.args = (exc.message,)
            if isinstance(exc.details, dict) and isinstance(exc.details.get("errors"), list):
                exc.details["errors"] = [str(e).replace(f"{folder}/", "") for e in exc.details["errors"]]
            raise
