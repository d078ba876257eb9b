"""STEL's TSV format: its header, the one reader and the one writer.

The format of STEL's published files (`quad_questions_char_*.tsv`) and of StyleCrowd's `stel-tsv` exports:
`<index>, Anchor 1, Anchor 2, Alternative 1.1, Alternative 1.2, Correct Alternative, ID,
# Votes out of 5 for Correct Alternative, style type`. A row whose Anchor 2 is empty is a triple (or a
style-or-content instance); `Correct Alternative` is 1 (order S1-S2: Alternative 1.1 goes with Anchor 1) or 2
(order S2-S1). STEL wrote its files with pandas, so cells holding quotes are CSV-quoted (`"a ""b"" c"`).

Readers: `import_corpus --format stel` (tasks.services.parsers) and `score_stel` (scoring.model_scoring.benchmark_io)
both call `stel_tsv_parse` and hold its rows as `StelRecord`s, the one row type (scoring keeps them `stripped()`);
each door keeps its own way of naming a place in a file (`file, line N` for imports, `file:N` for scoring).
Writer: `stel_tsv_write`, used by the `stel-tsv` export (scoring.export.formats).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from tasks.error_codes import DUPLICATE_ID, EMPTY_FILE, EMPTY_TEXT, INVALID_VALUE, MALFORMED_ROW, MISSING_COLUMNS

ANCHOR_1 = "Anchor 1"
ANCHOR_2 = "Anchor 2"
ALTERNATIVE_1 = "Alternative 1.1"
ALTERNATIVE_2 = "Alternative 1.2"
CORRECT = "Correct Alternative"
ID = "ID"
VOTES = "# Votes out of 5 for Correct Alternative"
STYLE_TYPE = "style type"
COLUMNS = [ANCHOR_1, ANCHOR_2, ALTERNATIVE_1, ALTERNATIVE_2, CORRECT, ID, VOTES, STYLE_TYPE]
HEADER = ["", *COLUMNS]  # pandas' unnamed index column first
# A file without Anchor 2 (triples only) or without votes (not annotated) is still a STEL TSV where a door allows it.
OPTIONAL = (ANCHOR_2, VOTES)
REQUIRED = tuple(column for column in COLUMNS if column not in OPTIONAL)
NON_EMPTY = (ANCHOR_1, ALTERNATIVE_1, ALTERNATIVE_2, ID, STYLE_TYPE)
CORRECT_VALUES = (1, 2)  # 1 = order S1-S2, 2 = order S2-S1

# STEL's screening questions (the paper's Table 5): their own, smaller TSV.
SCREENING_HEADER = [STYLE_TYPE, "Correct Order", ANCHOR_1, ANCHOR_2, ALTERNATIVE_1, ALTERNATIVE_2]


@dataclass(frozen=True)
class StelRecord:
    """One row of a STEL TSV: the one type for it in every app (imports read it as written, scoring reads it
    `stripped()`). Texts as written in the file, unstripped; `votes` None when empty."""

    line: int
    anchor_1: str
    anchor_2: str  # "" for a triple
    alternative_1: str
    alternative_2: str
    correct: int  # 1 = S1-S2, 2 = S2-S1
    id: str
    votes: int | None
    style_type: str
    where: str  # the place in the file, as the calling door names it

    @property
    def is_quadruple(self) -> bool:
        return self.anchor_2.strip() != ""

    def stripped(self) -> StelRecord:
        """The same row with its ID, texts and style type stripped of surrounding whitespace (how scoring compares
        sentences: a stray space in a file would otherwise change every similarity of that row)."""
        return replace(
            self, id=self.id.strip(), anchor_1=self.anchor_1.strip(), anchor_2=self.anchor_2.strip(),
            alternative_1=self.alternative_1.strip(), alternative_2=self.alternative_2.strip(),
            style_type=self.style_type.strip(),
        )


def stel_tsv_parse(
    text: str, *, where: Callable[[int], str], empty: str, required: tuple[str, ...] = REQUIRED,
    seen: dict[str, str] | None = None,
) -> list[StelRecord]:
    """Every row of one STEL TSV (`text`, decoded); an ApplicationError naming the file and line for anything
    malformed. `where(line)` names a place in the file; `empty` names the file when it has no header. `required`
    lists the columns the file must have (all of COLUMNS for an import, REQUIRED for scoring). `seen` maps the IDs
    of the files read before to where they were, for a set of files whose IDs must be distinct."""
    seen = {} if seen is None else seen
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ApplicationError(f"{where(1)}: cannot read the header: {exc}", code=MALFORMED_ROW) from exc
    if not header:
        raise ApplicationError(f"{empty}: the file is empty (expected a STEL header line)", code=EMPTY_FILE)
    missing = [column for column in required if column not in header]
    if missing:
        optional = [column for column in COLUMNS if column not in required]
        raise ApplicationError(
            f"{where(1)}: missing column(s) {', '.join(repr(c) for c in missing)}: not a STEL TSV, which needs "
            f"{', '.join(repr(c) for c in required)}"
            + (f" (and optionally {', '.join(repr(c) for c in optional)})" if optional else ""),
            code=MISSING_COLUMNS,
        )
    index = {column: header.index(column) for column in COLUMNS if column in header}
    records: list[StelRecord] = []
    line = 1
    try:
        for cells in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):  # a blank line
                continue
            if len(cells) != len(header):
                raise ApplicationError(f"{where(line)}: {len(cells)} fields, expected {len(header)} (the header's)",
                                       code=MALFORMED_ROW)
            records.append(_record({column: cells[i] for column, i in index.items()}, line, where(line), seen))
    except csv.Error as exc:
        raise ApplicationError(f"{where(line + 1)}: not a readable TSV line: {exc}", code=MALFORMED_ROW) from exc
    return records


def stel_row_parse(row: dict[str, str], *, line: int, where: str, seen: dict[str, str]) -> StelRecord:
    """One row given cell by cell under its STEL column names (a JSONL or Parquet export's row, renamed): the checks
    of a TSV row, with `where` naming it."""
    return _record(row, line, where, seen)


def _record(row: dict[str, str], line: int, where: str, seen: dict[str, str]) -> StelRecord:
    def cell(column: str) -> str:
        return row.get(column, "")

    for column in NON_EMPTY:
        if not cell(column).strip():
            raise ApplicationError(f"{where}: column {column!r} is empty", code=EMPTY_TEXT)
    raw_correct = cell(CORRECT).strip()
    try:
        correct = float(raw_correct)  # pandas may have written 1.0
    except ValueError:
        correct = -1.0
    if correct not in CORRECT_VALUES:
        raise ApplicationError(f"{where}: {CORRECT!r} must be 1 or 2, not {raw_correct!r}", code=INVALID_VALUE)
    raw_votes = cell(VOTES).strip()
    try:
        votes = int(float(raw_votes)) if raw_votes else None
    except ValueError:
        raise ApplicationError(f"{where}: {VOTES!r} must be a number or empty, not {raw_votes!r}",
                               code=INVALID_VALUE) from None
    stel_id = cell(ID)
    if stel_id in seen:
        raise ApplicationError(f"{where}: duplicate ID {stel_id!r} (it already appeared at {seen[stel_id]})",
                               code=DUPLICATE_ID)
    seen[stel_id] = where
    return StelRecord(
        line=line, anchor_1=cell(ANCHOR_1), anchor_2=cell(ANCHOR_2), alternative_1=cell(ALTERNATIVE_1),
        alternative_2=cell(ALTERNATIVE_2), correct=int(correct), id=stel_id, votes=votes,
        style_type=cell(STYLE_TYPE), where=where,
    )


def stel_tsv_write(rows: dict[str, Any], path: Path) -> None:
    """Write STEL's TSV: `rows` maps each of COLUMNS to a column of values (lists, arrays or pandas Series).

    pandas' writer is how STEL produced its files: the same quoting, the leading unnamed 0-based index column and
    "\\n" line endings, so an export of STEL's instances reproduces STEL's files."""
    # heavy: pandas loads only when a table is read
    import pandas as pd

    table = pd.DataFrame({column: rows[column] for column in COLUMNS}, columns=COLUMNS)
    table.index = range(len(table))
    table.to_csv(path, sep="\t", lineterminator="\n", encoding="utf-8")
