"""Parsers of the import formats: files in, rows out, no database access (doccano's data_import parsers).

Every error names the file and line. TurkCorpus rows are drawn, normalized and pair-tested here, because a
failed pair test re-draws the turker as STEL does.
"""
from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from core.errors import ApplicationError
from core.json_guard import JsonRefused, json_parse
from tasks.error_codes import (
    DUPLICATE_ID,
    EMPTY_ID,
    EMPTY_TEXT,
    FILE_NOT_FOUND,
    INVALID_ENCODING,
    INVALID_JSON,
    LINE_TOO_LONG,
    MALFORMED_ROW,
    MISSING_COLUMNS,
    NOT_A_FILE,
    NUL_IN_TEXT,
    UNEQUAL_LINE_COUNTS,
    UNKNOWN_FILE_TYPE,
    WRONG_FILE_COUNT,
)
from tasks.services.pair_test import PAIR_TEST_REASONS, pair_test
from tasks.stel import tsv as stel_tsv


@dataclass
class PairRow:
    """One parsed pair: `text_1` in the component's style 1, `text_2` in style 2."""

    source_id: str
    text_1: str
    text_2: str
    metadata: dict[str, Any] = field(default_factory=dict)


# --- parsing -------------------------------------------------------------------------------------------

# Style tags that STEL's published IDs use (QQ_ction-0-wiki-0_…), mapped to our component labels.
STEL_ID_TAGS = {
    "ction": "contracted", "wiki": "expanded", "leet": "substituted", "norm": "plain",
    "formal": "formal", "informal": "informal", "f": "formal", "i": "informal",
    "complex": "complex", "simple": "simple", "c": "complex", "s": "simple",
}


class LineLengthCheck:
    """Bytes fed in pieces (an upload's chunks, or a whole file); refuses the first line longer than
    STYLECROWD_MAX_LINE_BYTES, naming `name` and the line, without holding more than one piece."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.limit = int(settings.STYLECROWD_MAX_LINE_BYTES)
        self.line = 1
        self.length = 0  # bytes of the current line so far

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            self.length += (len(data) if end < 0 else end) - start
            if self.length > self.limit:
                raise ApplicationError(
                    f"{self.name}, line {self.line}: longer than {self.limit} bytes, the most one line may hold "
                    "(STYLECROWD_MAX_LINE_BYTES); is it the right file, with its line breaks?",
                    code=LINE_TOO_LONG, details={"file": self.name, "line": self.line, "max_bytes": self.limit})
            if end < 0:
                return
            self.line += 1
            self.length = 0
            start = end + 1


def read_text(path: str | Path) -> str:
    """Read a UTF-8 file; undecodable bytes and over-long lines are reported with file and line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ApplicationError(f"{path}: file not found", code=FILE_NOT_FOUND) from None
    except IsADirectoryError:
        raise ApplicationError(f"{path}: is a directory, not a file", code=NOT_A_FILE) from None
    LineLengthCheck(str(path)).feed(data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ApplicationError(
            f"{path}, line {line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            code=INVALID_ENCODING,
        ) from None
    if "\x00" in text:  # PostgreSQL stores no NUL in text, and none belongs on a participant's screen
        line = text[: text.index("\x00")].count("\n") + 1
        raise ApplicationError(f"{path}, line {line}: holds a NUL character (\\u0000), which no text may hold.",
                               code=NUL_IN_TEXT)
    return text


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start an empty one
    return [line.rstrip("\r") for line in lines]


def parse_aligned(paths: Sequence[str | Path]) -> tuple[list[PairRow], dict[str, Any]]:
    """Two files, line i of the first (style 1) parallel to line i of the second (style 2)."""
    if len(paths) != 2:
        raise ApplicationError(
            f"format 'aligned' needs exactly two files (style 1, style 2); got {len(paths)}", code=WRONG_FILE_COUNT
        )
    first, second = (_lines(read_text(p)) for p in paths)
    if len(first) != len(second):
        raise ApplicationError(
            f"{paths[0]} has {len(first)} lines but {paths[1]} has {len(second)}: aligned files need equal line counts",
            code=UNEQUAL_LINE_COUNTS,
        )
    rows = []
    for number, (text_1, text_2) in enumerate(zip(first, second, strict=True), start=1):
        for path, text in ((paths[0], text_1), (paths[1], text_2)):
            if not text.strip():
                raise ApplicationError(f"{path}, line {number}: empty text", code=EMPTY_TEXT)
        rows.append(PairRow(source_id=str(number), text_1=text_1.strip(), text_2=text_2.strip()))
    return rows, {"lines": len(rows)}


TURKCORPUS_TURKERS = 8
TURKCORPUS_COLUMNS = 2 + TURKCORPUS_TURKERS  # id, complex, turk_0 … turk_7
STEL_REDRAWS = 10  # STEL's find_distinct_enough_for_mutable: up to 10 further draws of the turker


def parse_turkcorpus(
    paths: Sequence[str | Path], *, seed: int, min_edit_distance: int, normalize: Callable[[str], str] | None,
) -> tuple[list[PairRow], dict[str, Any]]:
    """TurkCorpus organized TSV as STEL reads it: 10 columns (id, complex, turk_0 … turk_7). For each row one of
    the 8 turkers is drawn uniformly with the seeded RNG; both texts are normalized, and when the pair fails the
    pair test the turker is drawn again, up to 10 times, before the row is dropped (counted by the reason of its
    last draw). Rows are numbered 0, 1, … across the files in the order given, as STEL numbers them after
    concatenating test and tune (its ID `c-85-s-t5-85` is row 85 with turker 5)."""
    rng = random.Random(seed)
    rows: list[PairRow] = []
    skipped: Counter[str] = Counter()
    turkers: Counter[str] = Counter()
    # draws_artefact_only: draws refused because the turker's text differs only in quote marks or spacing
    stats: dict[str, Any] = {"rows_read": 0, "redraws": 0, "rows_redrawn": 0, "texts_changed": 0,
                             "draws_artefact_only": 0}
    index = 0
    for path in paths:
        for number, line in enumerate(_lines(read_text(path)), start=1):
            if not line.strip():
                continue
            cells = line.split("\t")
            if len(cells) != TURKCORPUS_COLUMNS:
                raise ApplicationError(
                    f"{path}, line {number}: expected {TURKCORPUS_COLUMNS} tab-separated columns (id, complex, "
                    f"turk_0 … turk_7); found {len(cells)}",
                    code=MISSING_COLUMNS,
                )
            stats["rows_read"] += 1
            row_index, index = index, index + 1
            row_id = cells[0].strip()
            if not row_id:
                raise ApplicationError(f"{path}, line {number}: empty id", code=EMPTY_ID)
            complex_raw = cells[1].strip()
            complex_text = normalize(complex_raw) if normalize else complex_raw
            reason, draws = "empty", 0
            while draws <= STEL_REDRAWS:
                turker = rng.randrange(TURKCORPUS_TURKERS)
                draws += 1
                simple_raw = cells[2 + turker].strip()
                simple_text = normalize(simple_raw) if normalize else simple_raw
                reason = pair_test(complex_text, simple_text, min_edit_distance=min_edit_distance)
                if reason is None:
                    break
                stats["draws_artefact_only"] += reason == "artefact_only"
            stats["redraws"] += draws - 1
            stats["rows_redrawn"] += draws > 1
            if reason is not None:
                skipped[reason] += 1
                continue
            turkers[f"t{turker}"] += 1
            stats["texts_changed"] += (complex_text != complex_raw) + (simple_text != simple_raw)
            metadata: dict[str, Any] = {
                "file": Path(path).name, "line": number, "id": row_id, "turker": f"t{turker}", "draws": draws,
                "style_tags": {"1": "c", "2": f"s-t{turker}"},
            }
            if complex_text != complex_raw or simple_text != simple_raw:
                metadata["original"] = {"text_1": complex_raw, "text_2": simple_raw}
            rows.append(PairRow(source_id=str(row_index), text_1=complex_text, text_2=simple_text, metadata=metadata))
    stats.update({f"skipped_{reason}": skipped[reason] for reason in PAIR_TEST_REASONS})
    stats["turkers"] = dict(sorted(turkers.items()))
    return rows, stats


def pairs_screen(
    rows: Sequence[PairRow], *, min_edit_distance: int, normalize: Callable[[str], str] | None,
) -> tuple[list[PairRow], dict[str, Any]]:
    """Normalize (when asked) and pair-test parsed rows of the `aligned` and `pairs` formats; failing rows are
    dropped and counted by reason."""
    kept: list[PairRow] = []
    skipped: Counter[str] = Counter()
    changed = 0
    for row in rows:
        text_1 = normalize(row.text_1) if normalize else row.text_1
        text_2 = normalize(row.text_2) if normalize else row.text_2
        reason = pair_test(text_1, text_2, min_edit_distance=min_edit_distance)
        if reason is not None:
            skipped[reason] += 1
            continue
        changed += (text_1 != row.text_1) + (text_2 != row.text_2)
        metadata = dict(row.metadata)
        if text_1 != row.text_1 or text_2 != row.text_2:
            metadata["original"] = {"text_1": row.text_1, "text_2": row.text_2}
        kept.append(PairRow(source_id=row.source_id, text_1=text_1, text_2=text_2, metadata=metadata))
    return kept, {"texts_changed": changed, **{f"skipped_{reason}": skipped[reason] for reason in PAIR_TEST_REASONS}}


def parse_pairs(paths: Sequence[str | Path]) -> tuple[list[PairRow], dict[str, Any]]:
    """CSV, TSV or JSONL with columns text_a (style 1), text_b (style 2) and an optional id."""
    rows: list[PairRow] = []
    origin: dict[str, str] = {}
    for path in paths:
        suffix = Path(path).suffix.lower()
        prefix = f"{Path(path).stem}:" if len(paths) > 1 else ""
        records = records_read(
            path, read_text(path), required=("text_a", "text_b"),
            unknown_type=f"{path}: format 'pairs' reads .csv, .tsv or .jsonl files; cannot tell the format of "
                         f"'{suffix}'",
        )
        for number, record in records:
            where = f"{path}, line {number}"
            text_a, text_b = (str(record.get(key) or "").strip() for key in ("text_a", "text_b"))
            if not text_a or not text_b:
                raise ApplicationError(f"{where}: empty {'text_a' if not text_a else 'text_b'}", code=EMPTY_TEXT)
            raw_id = record.get("id")
            source_id = prefix + (str(raw_id).strip() if raw_id not in (None, "") else str(number))
            if source_id in origin:
                raise ApplicationError(
                    f"{where}: duplicate id {source_id!r} (first seen at {origin[source_id]})", code=DUPLICATE_ID
                )
            origin[source_id] = where
            rows.append(PairRow(source_id=source_id, text_1=text_a, text_2=text_b))
    return rows, {"rows_read": len(rows)}


def records_read(path: str | Path, text: str, *, required: Sequence[str] = (),
                 unknown_type: str = "") -> list[tuple[int, dict[str, Any]]]:
    """The records of a CSV, TSV or JSONL file (by its suffix), each with the line it starts on. `required` columns
    (CSV/TSV header) or fields (every JSONL object) are checked; every bad line is named. The one reader of such
    files: corpus pairs, rating-study outputs, content-error pairs."""
    suffix = Path(path).suffix.lower()
    if suffix in {".jsonl", ".ndjson"}:
        return _jsonl_records(path, text, required)
    if suffix in {".csv", ".tsv", ".tab"}:
        return _delimited_records(path, text, "," if suffix == ".csv" else "\t", required)
    raise ApplicationError(unknown_type or f"{path}: reads .csv, .tsv or .jsonl files, not '{suffix}'",
                           code=UNKNOWN_FILE_TYPE)


def _jsonl_records(path: str | Path, text: str, required: Sequence[str]) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json_parse(line)
        except JsonRefused as exc:
            raise ApplicationError(f"{path}, line {number}: {exc.message}", code=INVALID_JSON) from None
        except json.JSONDecodeError as exc:
            raise ApplicationError(f"{path}, line {number}: invalid JSON ({exc.msg})", code=INVALID_JSON) from None
        if not isinstance(record, dict):
            raise ApplicationError(f"{path}, line {number}: expected a JSON object", code=INVALID_JSON)
        missing = [key for key in required if key not in record]
        if missing:
            raise ApplicationError(
                f"{path}, line {number}: missing field(s) {', '.join(missing)}", code=MISSING_COLUMNS
            )
        records.append((number, record))
    return records


def _delimited_records(path: str | Path, text: str, delimiter: str,
                       required: Sequence[str]) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [name.strip() for name in (reader.fieldnames or [])]
    missing = [key for key in required if key not in header]
    if missing:
        raise ApplicationError(
            f"{path}, line 1: missing column(s) {', '.join(missing)} (found: {', '.join(header) or 'no header'})",
            code=MISSING_COLUMNS,
        )
    reader.fieldnames = header
    records = []
    for record in reader:
        if None in record:
            raise ApplicationError(
                f"{path}, line {reader.line_num}: more fields than the header has", code=MALFORMED_ROW
            )
        records.append((reader.line_num, record))
    return records


@dataclass
class StelRow:
    line: int
    anchor_1: str
    anchor_2: str
    sentence_1: str
    sentence_2: str
    correct_alternative: int
    stel_id: str
    votes: int | None
    style_type: str


def parse_stel(paths: Sequence[str | Path]) -> list[StelRow]:
    """STEL's own TSV export, read by STEL's one reader (`tasks.stel.tsv`); every column is required here and IDs
    are distinct across the files."""
    rows: list[StelRow] = []
    seen: dict[str, str] = {}
    for path in paths:
        records = stel_tsv.stel_tsv_parse(read_text(path), where=lambda line, path=path: f"{path}, line {line}",
                                          empty=str(path), required=tuple(stel_tsv.COLUMNS), seen=seen)
        rows += [StelRow(
            line=r.line, anchor_1=r.anchor_1, anchor_2=r.anchor_2, sentence_1=r.alternative_1,
            sentence_2=r.alternative_2, correct_alternative=r.correct, stel_id=r.id, votes=r.votes,
            style_type=r.style_type.strip(),
        ) for r in records]
    return rows


