"""import_annotations: annotations collected elsewhere (Qualtrics, Google Forms, Prolific exports), long format.

CSV columns `item`, `annotator`, `value`, optional `question`, `item_text`, `correct`. Every row is checked
first and every bad row is reported by line; only a clean file is stored, in one transaction.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import ItemKind, Participant, Response, Study, StudyItem
from core.erasure import erased_person_keys
from core.errors import ApplicationError
from scoring.agreement.stats.alpha import LEVELS
from scoring.agreement.stats.scales import scale_parse
from scoring.error_codes import (
    BAD_ENCODING,
    BAD_ROWS,
    CORRECT_MISMATCH,
    DUPLICATE_RESPONSE,
    ERASED_PERSON,
    INVALID_LEVEL,
    INVALID_QUESTION,
    SCALE_MISMATCH,
    STUDY_KIND_MISMATCH,
    STUDY_NOT_IMPORTED,
)
from tasks.error_codes import EMPTY_FILE, FILE_NOT_FOUND, MISSING_COLUMNS
from tasks.stel.majority import min_correct_default

REQUIRED = ("item", "annotator", "value")
OPTIONAL = ("question", "item_text", "correct")
MAX_REPORTED = 25


@dataclass
class Row:
    line: int
    item: str
    annotator: str
    question: str
    answer: str
    value: float | None
    item_text: str
    correct: str


def _canonical(raw: str, *, numeric: bool, domain: list) -> tuple[str, float | None] | None:
    """The stored answer and numeric value, or None when `raw` is not on the scale."""
    raw = raw.strip()
    if not numeric:
        return (raw, None) if raw in domain else None
    try:
        number = float(raw)
    except ValueError:
        return None
    if not domain[0] <= number <= domain[-1]:
        return None
    text = str(int(number)) if number.is_integer() else repr(number)
    return text, number


def _file_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ApplicationError(f"{path}: file not found", code=FILE_NOT_FOUND) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ApplicationError(f"{path}:{line}: not valid UTF-8 ({exc.reason})", code=BAD_ENCODING) from None


def _read_rows(*, path: Path, question: str, numeric: bool, domain: list) -> list[Row]:
    text = _file_text(path)
    dialect = "excel-tab" if path.suffix.lower() in {".tsv", ".tab"} else "excel"
    reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        have = ", ".join(header) or "none"
        raise ApplicationError(f"{path}:1: missing column(s) {', '.join(missing)} (have: {have})",
                               code=MISSING_COLUMNS)
    reader.fieldnames = header
    rows: list[Row] = []
    errors: list[str] = []
    seen: dict[tuple[str, str, str], int] = {}
    correct_of: dict[str, tuple[str, int]] = {}
    for record in reader:
        line = reader.line_num
        if None in record:
            errors.append(f"{path}:{line}: more fields than columns")
            continue
        values = {key: (record.get(key) or "").strip() for key in (*REQUIRED, *OPTIONAL)}
        if not any(values.values()):
            continue  # blank line
        problems = [f"empty {c}" for c in REQUIRED if not values[c]]
        parsed = _canonical(values["value"], numeric=numeric, domain=domain) if values["value"] else None
        if values["value"] and parsed is None:
            problems.append(f"value '{values['value']}' is not on the scale {_scale_text(numeric, domain)}")
        correct = _correct_read(values, line=line, numeric=numeric, domain=domain, correct_of=correct_of,
                                problems=problems) if values["correct"] else ""
        row_question = values["question"] or question
        key = (values["item"], values["annotator"], row_question)
        if values["item"] and values["annotator"] and key in seen:
            problems.append(f"annotator '{values['annotator']}' rated item '{values['item']}' twice "
                            f"(also line {seen[key]})")
        seen.setdefault(key, line)
        if problems:
            errors.append(f"{path}:{line}: " + "; ".join(problems))
            continue
        assert parsed is not None
        rows.append(Row(line=line, item=values["item"], annotator=values["annotator"], question=row_question,
                        answer=parsed[0], value=parsed[1], item_text=values["item_text"], correct=correct))
    if errors:
        raise _bad_rows(errors)
    if not rows:
        raise ApplicationError(f"{path}: no annotations found", code=EMPTY_FILE)
    return rows


def _refuse_erased(*, path: Any, rows: list[Row]) -> None:
    """A person who asked for erasure is not brought back by an import: their rows are named by line (and by the
    person key, so the message itself does not repeat the id) and nothing is imported."""
    erased = erased_person_keys(external_ids=[row.annotator for row in rows])
    if not erased:
        return
    bad = [f"{path}:{row.line}: annotator {erased[row.annotator]} asked for their data to be erased; remove their "
           "rows" for row in rows if row.annotator in erased]
    more = f"\n… and {len(bad) - 10} more" if len(bad) > 10 else ""
    raise ApplicationError(f"{len(bad)} row(s) of erased people; nothing was imported:\n" + "\n".join(bad[:10]) + more,
                           code=ERASED_PERSON)


def _correct_read(values: dict[str, str], *, line: int, numeric: bool, domain: list,
                  correct_of: dict[str, tuple[str, int]], problems: list[str]) -> str:
    """A row's `correct` on the scale ("" when it is not: the problem is appended), the same on every row of its
    item (the first line that gives it is remembered in `correct_of`)."""
    parsed_correct = _canonical(values["correct"], numeric=numeric, domain=domain)
    if parsed_correct is None:
        problems.append(f"correct '{values['correct']}' is not on the scale {_scale_text(numeric, domain)}")
        return ""
    correct = parsed_correct[0]
    earlier = correct_of.setdefault(values["item"], (correct, line))
    if earlier[0] != correct:
        problems.append(f"item '{values['item']}' has correct '{correct}' here but '{earlier[0]}' on "
                        f"line {earlier[1]}")
    return correct


def _bad_rows(errors: list[str]) -> ApplicationError:
    shown = errors[:MAX_REPORTED]
    more = f" (and {len(errors) - MAX_REPORTED} more)" if len(errors) > MAX_REPORTED else ""
    return ApplicationError(f"{len(errors)} bad row(s); nothing was imported:\n" + "\n".join(shown) + more,
                            code=BAD_ROWS, details={"errors": errors[:200]})


def _scale_text(numeric: bool, domain: list) -> str:
    return f"{domain[0]}-{domain[-1]}" if numeric else ",".join(domain)


def _item_kind(numeric: bool, domain: list) -> str:
    if not numeric and sorted(domain) == ["S1-S2", "S2-S1"]:
        return ItemKind.QUADRUPLE
    if not numeric and sorted(domain) == ["S1", "S2"]:
        return ItemKind.TRIPLE
    return ItemKind.LIKERT


def levels_check(*, level: str, numeric: bool, scale: str) -> str:
    """The measurement level of an imported question: given, or ordinal for a numeric scale, nominal otherwise."""
    if level and level not in LEVELS:
        raise ApplicationError(f"level '{level}' must be one of {', '.join(LEVELS)}", code=INVALID_LEVEL)
    level = level or ("ordinal" if numeric else "nominal")
    if not numeric and level != "nominal":
        raise ApplicationError(f"a categorical scale ({scale}) can only be nominal, not {level}", code=INVALID_LEVEL)
    return level


@transaction.atomic
def annotations_import(
    *,
    study_slug: str,
    question: str,
    scale: str,
    path: Path,
    level: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Create (or extend an imported) study with the file's items, annotators and responses."""
    numeric, domain = scale_parse(scale)
    level = levels_check(level=level, numeric=numeric, scale=scale)
    if not question.strip():
        raise ApplicationError("Question must not be empty", code=INVALID_QUESTION, field="question")
    rows = _read_rows(path=Path(path), question=question.strip(), numeric=numeric, domain=domain)
    _refuse_erased(path=path, rows=rows)

    kind = _item_kind(numeric, domain)
    per_item: dict[tuple[str, str], int] = {}
    for row in rows:
        per_item[(row.item, row.question)] = per_item.get((row.item, row.question), 0) + 1
    k = max(per_item.values())
    spec_base: dict[str, Any] = {"level": level, "source": str(path)}
    spec_base.update({"min": domain[0], "max": domain[-1]} if numeric else {"categories": domain})
    question_names = sorted({row.question for row in rows})

    study, created = _study_for_import(study_slug=study_slug, path=Path(path), kind=kind, k=k,
                                       question_names=question_names, spec_base=spec_base)
    items, new_items = _items_import(study, rows, kind=kind, path=path)
    people, new_people = _annotators_import(study, rows)

    responses = _responses_build(study, rows, items=items, people=people, path=path, progress=progress)
    Response.objects.bulk_create(responses, batch_size=5000)
    return {
        "study": study.slug, "created": created, "question": question_names, "scale": scale, "level": level,
        "items_created": len(new_items), "annotators_created": len(new_people), "responses": len(responses),
        "annotators_per_item": study.annotators_per_item, "min_correct": study.min_correct,
    }


def _study_for_import(*, study_slug: str, path: Path, kind: str, k: int, question_names: list[str],
                      spec_base: dict[str, Any], specs: dict[str, dict[str, Any]] | None = None
                      ) -> tuple[Study, bool]:
    """The imported study (created, or an earlier import extended) with the file's questions on its scale (`specs`:
    a question's own stored spec, e.g. a preset's text and labels)."""
    study, created = Study.objects.select_for_update().get_or_create(
        slug=study_slug,
        defaults={"title": f"Imported annotations ({Path(path).name})", "item_kind": kind,
                  "origin": Study.Origin.IMPORTED, "status": Study.Status.CLOSED, "annotators_per_item": k,
                  "min_correct": min_correct_default(k)},
    )
    if not created and study.origin != Study.Origin.IMPORTED:
        raise ApplicationError(f"study '{study_slug}' collects annotations on the platform; import into a new slug",
                               code=STUDY_NOT_IMPORTED, status=409)
    if not created and study.item_kind != kind:
        raise ApplicationError(f"study '{study_slug}' holds {study.item_kind} items, this scale makes {kind} items",
                               code=STUDY_KIND_MISMATCH, status=409)
    questions = [q for q in (study.questions or []) if isinstance(q, dict)]
    for name in question_names:
        existing = next((q for q in questions if q.get("name") == name), None)
        if existing is None:
            questions.append((specs or {}).get(name) or {"name": name, "text": name, **spec_base})
        elif {key: existing.get(key) for key in ("min", "max", "categories")} != {
            key: spec_base.get(key) for key in ("min", "max", "categories")
        }:
            raise ApplicationError(f"question '{name}' of study '{study_slug}' has another scale already",
                                   code=SCALE_MISMATCH, status=409)
    study.questions = questions
    if not created and k > study.annotators_per_item:
        study.annotators_per_item = k
    study.save()
    return study, created


def _items_import(study: Study, rows: list[Row], *, kind: str, path: Path,
                  payloads: dict[str, dict[str, Any]] | None = None) -> tuple[dict[str, StudyItem], list[StudyItem]]:
    """The study's items by external id, the file's new ones created (their correct answer from the file, their
    payload from `payloads` when given: the texts of rated rewrites)."""
    items = {i.external_id: i for i in StudyItem.objects.filter(study=study)}
    position = max((i.position for i in items.values()), default=-1) + 1
    new_items = []
    for row in rows:
        if row.item in items:
            item = items[row.item]
            if row.correct and item.correct_answer and item.correct_answer != row.correct:
                raise ApplicationError(f"{path}:{row.line}: item '{row.item}' already has correct "
                                       f"'{item.correct_answer}'", code=CORRECT_MISMATCH)
            continue
        payload = {"item_text": row.item_text} if row.item_text else {}
        item = StudyItem(study=study, external_id=row.item, position=position, kind=kind,
                         payload=dict((payloads or {}).get(row.item) or payload), correct_answer=row.correct)
        items[row.item] = item
        new_items.append(item)
        position += 1
    correct_of = {row.item: row.correct for row in rows if row.correct}
    for item in new_items:
        item.correct_answer = correct_of.get(item.external_id, "")
    StudyItem.objects.bulk_create(new_items, batch_size=5000)
    return items, new_items


def _annotators_import(study: Study, rows: list[Row]) -> tuple[dict[str, Participant], list[Participant]]:
    """The study's imported annotators by external id, the file's new ones created."""
    people = {p.external_id: p for p in Participant.objects.filter(study=study, platform=Participant.Platform.IMPORTED)}
    new_people = [Participant(study=study, platform=Participant.Platform.IMPORTED, external_id=name)
                  for name in dict.fromkeys(row.annotator for row in rows) if name not in people]
    Participant.objects.bulk_create(new_people, batch_size=5000)
    people.update({p.external_id: p for p in new_people})
    return people, new_people


def _responses_build(study: Study, rows: list[Row], *, items: dict[str, StudyItem], people: dict[str, Participant],
                     path: Path, progress: Callable[[int, int], None] | None) -> list[Response]:
    """One response per row, refused when the annotator already rated the item in this study."""
    existing = set(Response.objects.filter(study=study).values_list("participant_id", "study_item_id", "question"))
    # File order is time order: "the first k responses" of an item are its first k lines.
    base = timezone.now()
    responses = []
    for index, row in enumerate(rows):
        item = items[row.item]
        person = people[row.annotator]
        if (person.pk, item.pk, row.question) in existing:
            raise ApplicationError(f"{path}:{row.line}: annotator '{row.annotator}' already rated item '{row.item}' "
                                   f"({row.question}) in study '{study.slug}'", code=DUPLICATE_RESPONSE)
        correct = item.correct_answer
        responses.append(Response(
            study=study, participant=person, study_item=item, question=row.question, answer=row.answer,
            value=row.value, is_correct=(row.answer == correct) if correct else None,
            answered_at=base + timedelta(microseconds=index), shown={"imported_from": str(path), "line": row.line},
        ))
        if progress and index % 5000 == 0:
            progress(index, len(rows))
    return responses
