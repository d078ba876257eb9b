"""The wide ratings file (one row per rewrite, one column per rater per question; Pauli et al.'s release): which
columns hold what (`WideMapping`, from the CLI's, the API's and the admin's text) and its reader (`wide_read`: items
and ratings, every bad line named by file, line and column, nothing stored; `ratings_import` in
`scoring/agreement/rating_imports.py` stores them).

Rater n's ratings are the columns `<prefix>-<n>` / `<prefix>_<n>`. Without `rater_ids` rater n is "rater-n" on every
row: a position, not a person (a position is not the same person across rows or files, and the per-annotator models
warn on such ids: `scoring.agreement.positional_ids`). With `rater_ids` (the columns holding rater n's own
id on each row, e.g. Pauli et al.'s `prolificID_1`…`prolificID_3`) each rating is stored under the rater's id; the id
is kept as every imported annotator's id is (the participant's `external_id`, shown only to holders of the
personal-data permission) and leaves the database as a keyed pseudonym only (`core/pseudonyms.py`).
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from scoring.agreement.imports import Row, _bad_rows, _canonical, _file_text, _scale_text
from scoring.error_codes import INVALID_ARGUMENTS
from tasks.error_codes import EMPTY_FILE, MISSING_COLUMNS

ITEM_FIELDS = ("source", "rewrite", "reference", "system", "target_style", "dataset", "language")
# The texts are stored as the file gives them, outer spaces included: a metric that reads characters (bleu_char,
# chrF, edit distances) then scores the same strings as the paper's own code did. The other fields are trimmed.
TEXT_FIELDS = ("source", "rewrite", "reference")


def _field(key: str, raw: Any) -> str:
    text = str(raw) if raw is not None else ""
    return text if key in TEXT_FIELDS else text.strip()


@dataclass(frozen=True)
class WideMapping:
    """Which columns of a wide ratings CSV hold what. `raters` maps a column prefix to a question name: the columns
    `<prefix>-<n>` hold rater n's answers (Pauli et al.: `c-1`… content, `s-1`… style, `f-1`… fluency)."""

    id: str = "id"
    source: str = "input"
    rewrite: str = "output"
    reference: str = "reference"
    target_style: str = "style_to"
    system: str = "system"
    dataset: str = "dataset"
    language: str = "language"
    raters: dict[str, str] = field(default_factory=lambda: {
        "c": "content_preservation", "s": "style_strength", "f": "fluency"})
    # The columns that hold each rater's own id: a prefix (`prolificID`: the columns `prolificID_<n>` / `-<n>` name
    # rater n) or the columns themselves (`WorkerId_1,WorkerId_2`: the number after the last `-`/`_` says whose
    # ratings each names). Empty: raters are their column positions ("rater-n").
    rater_ids: tuple[str, ...] = ()

    @classmethod
    def parse(cls, *, columns: str = "", raters: str = "", rater_ids: str = "") -> WideMapping:
        """From `source=input,rewrite=output`, `c=content_preservation,s=style_strength` and `prolificID` (or
        `WorkerId_1,WorkerId_2,WorkerId_3`) (CLI/API/admin text)."""
        base = cls()
        known = {"id", *ITEM_FIELDS}
        chosen: dict[str, Any] = {}
        for key, value in _pairs(columns, what="column mapping"):
            if key not in known:
                raise ApplicationError(f"column mapping: {key!r} is not one of {', '.join(sorted(known))}",
                                       code=MISSING_COLUMNS, field="columns")
            chosen[key] = value
        if raters:
            chosen["raters"] = dict(_pairs(raters, what="rater columns"))
        names = tuple(dict.fromkeys(n.strip() for n in rater_ids.split(",") if n.strip()))
        bad = [n for n in names if "=" in n]
        if bad:
            raise ApplicationError(f"rater id columns: {bad[0]!r} is a column name or a prefix, not NAME=VALUE",
                                   code=MISSING_COLUMNS, field="rater_ids")
        chosen["rater_ids"] = names
        return cls(**{**base.__dict__, **chosen})

    @classmethod
    def of_options(cls, *, wide: bool, columns: str = "", raters: str = "", rater_ids: str = "") -> WideMapping | None:
        """The mapping of a door's options (the CLI's, the API's, the admin's), None for a long file. Rater id
        columns without a wide file are refused, not ignored: a long file names its annotators in its `annotator`
        column, and ids asked for but not read would leave the raters as positions unseen."""
        if not wide:
            if rater_ids.strip():
                raise ApplicationError("rater id columns (--rater-ids, the API's rater_ids, the admin's \"Rater id "
                                       "columns\") name columns of a wide file: add --wide (the API's \"wide\": true, "
                                       "the admin's wide box), or leave them out for a long file, whose annotator "
                                       "column names its raters", code=INVALID_ARGUMENTS, field="rater_ids")
            return None
        return cls.parse(columns=columns, raters=raters, rater_ids=rater_ids)


def _pairs(text: str, *, what: str) -> list[tuple[str, str]]:
    pairs = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ApplicationError(f"{what}: {part!r} is not NAME=VALUE", code=MISSING_COLUMNS, field="columns")
        pairs.append((key.strip(), value.strip()))
    return pairs


RATER_COLUMN = re.compile(r"(.+)[-_]([A-Za-z0-9]+)")


@dataclass(frozen=True)
class RaterColumn:
    """One rating column of a wide file: its question, the rater's number (the column's suffix) and the column that
    holds that rater's id on each row ("" where raters are positions)."""

    column: str
    question: str
    number: str
    id_column: str = ""


def _wide_header(path: Path, text: str, mapping: WideMapping) -> tuple[list[str], list[RaterColumn]]:
    """The header and the rater columns (each with its id column where the mapping names them)."""
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    header = [h.strip() for h in header]
    missing = [getattr(mapping, key) for key in ("source", "rewrite") if getattr(mapping, key) not in header]
    if missing:
        raise ApplicationError(f"{path}:1: missing column(s) {', '.join(missing)} (have: {', '.join(header)}); "
                               "name them with the column mapping", code=MISSING_COLUMNS)
    raters = []
    for column in header:
        match = RATER_COLUMN.fullmatch(column)
        if match and match.group(1) in mapping.raters:
            raters.append(RaterColumn(column=column, question=mapping.raters[match.group(1)], number=match.group(2)))
    if not raters:
        prefixes = ", ".join(f"{p}-1" for p in mapping.raters)
        raise ApplicationError(f"{path}:1: no rater columns ({prefixes}, ...; have: {', '.join(header)}); name their "
                               "prefixes with the rater mapping", code=MISSING_COLUMNS)
    if not mapping.rater_ids:
        return header, raters
    id_columns = _id_columns(path, header, mapping.rater_ids)
    unnamed = [r.column for r in raters if r.number not in id_columns]
    if unnamed:
        raise ApplicationError(f"{path}:1: no rater id column for {', '.join(unnamed)} (the id columns "
                               f"{', '.join(id_columns.values())} name raters {', '.join(id_columns)}; have: "
                               f"{', '.join(header)})", code=MISSING_COLUMNS)
    rated = {r.number for r in raters}
    idle = [(n, c) for n, c in id_columns.items() if c in mapping.rater_ids and n not in rated]
    if idle:
        raise ApplicationError(f"{path}:1: rater id column '{idle[0][1]}' names rater '{idle[0][0]}', who has no "
                               f"rating column ({', '.join(sorted(rated))} have)", code=MISSING_COLUMNS,
                               field="rater_ids")
    return header, [replace(r, id_column=id_columns[r.number]) for r in raters]


def _id_columns(path: Path, header: list[str], names: tuple[str, ...]) -> dict[str, str]:
    """{rater number: the column holding that rater's id} from the id columns or prefixes named (`names`)."""
    found: dict[str, str] = {}
    for name in names:
        if name in header:
            match = RATER_COLUMN.fullmatch(name)
            if match is None:
                raise ApplicationError(f"{path}:1: rater id column '{name}' does not end in the rater's number "
                                       f"('{name}_1', ...); name the columns as {name}_1,{name}_2 or their prefix",
                                       code=MISSING_COLUMNS, field="rater_ids")
            pairs = [(match.group(2), name)]
        else:
            pairs = [(m.group(2), column) for column in header
                     if (m := RATER_COLUMN.fullmatch(column)) and m.group(1) == name]
            if not pairs:
                raise ApplicationError(f"{path}:1: missing rater id column(s) {name!r} (neither a column nor the "
                                       f"prefix of {name}_1, {name}-1, ...; have: {', '.join(header)})",
                                       code=MISSING_COLUMNS, field="rater_ids")
        for number, column in pairs:
            if found.setdefault(number, column) != column:
                raise ApplicationError(f"{path}:1: rater id columns '{found[number]}' and '{column}' both name "
                                       f"rater {number}", code=MISSING_COLUMNS, field="rater_ids")
    return found


def _row_ratings(record: dict[str, Any], *, line: int, item_id: str, raters: list[RaterColumn], numeric: bool,
                 domain: list) -> tuple[list[Row], list[str]]:
    """One row's ratings, each under its rater (the id column's value, or the position `rater-<n>`), and the row's
    problems by column: a value off the scale, a rating without its rater's id, the same rater twice on a
    question."""
    rows: list[Row] = []
    problems: list[str] = []
    seen: dict[tuple[str, str], RaterColumn] = {}
    for rater in raters:
        raw = (record.get(rater.column) or "").strip()
        if not raw:
            continue  # this rater did not rate this row
        parsed = _canonical(raw, numeric=numeric, domain=domain)
        if parsed is None:
            problems.append(f"column '{rater.column}': value {raw!r} is not on the scale "
                            f"{_scale_text(numeric, domain)}")
            continue
        annotator = (record.get(rater.id_column) or "").strip() if rater.id_column else f"rater-{rater.number}"
        if not annotator:
            problems.append(f"column '{rater.id_column}': empty, but '{rater.column}' holds a rating")
            continue
        earlier = seen.setdefault((annotator, rater.question), rater)
        if earlier is not rater:
            # The message names the columns, never the id (it may be a platform id).
            problems.append(f"column '{rater.id_column or rater.column}': the same rater as "
                            f"'{earlier.id_column or earlier.column}', so '{earlier.column}' and '{rater.column}' "
                            f"rate {rater.question} twice for one rater")
            continue
        rows.append(Row(line=line, item=item_id, annotator=annotator, question=rater.question, answer=parsed[0],
                        value=parsed[1], item_text="", correct=""))
    return rows, problems


def wide_read(*, path: Path, mapping: WideMapping, numeric: bool, domain: list
              ) -> tuple[dict[str, dict[str, str]], list[Row]]:
    """The wide file's items ({id: payload}) and ratings; every bad line named by file, line and column."""
    text = _file_text(path)
    header, raters = _wide_header(path, text, mapping)
    reader = csv.DictReader(io.StringIO(text, newline=""), fieldnames=header)
    next(reader)
    items: dict[str, dict[str, str]] = {}
    rows: list[Row] = []
    errors: list[str] = []
    for record in reader:
        line = reader.line_num
        if None in record:
            errors.append(f"{path}:{line}: more fields than columns")
            continue
        if not any((v or "").strip() for v in record.values()):
            continue
        item_id = (record.get(mapping.id) or "").strip() or f"{path.stem}-{line}"
        payload = {key: _field(key, record.get(getattr(mapping, key))) for key in ITEM_FIELDS}
        problems = [f"column '{getattr(mapping, key)}': empty" for key in ("source", "rewrite")
                    if not payload[key].strip()]
        if item_id in items:
            problems.append(f"column '{mapping.id}': {item_id!r} repeats an earlier row")
        ratings, rating_problems = _row_ratings(record, line=line, item_id=item_id, raters=raters, numeric=numeric,
                                                domain=domain)
        rows += ratings
        problems += rating_problems
        if problems:
            errors.append(f"{path}:{line}: " + "; ".join(problems))
            continue
        items[item_id] = {key: value for key, value in payload.items() if value.strip()}
    if errors:
        raise _bad_rows(errors)
    if not rows:
        raise ApplicationError(f"{path}: no ratings", code=EMPTY_FILE)
    return items, rows
