"""Reading a benchmark for scoring: a STEL-format TSV (the format of STEL's published files and of the `stel-tsv`
export), or any other export of a benchmark with its texts: JSON lines, Parquet, or a Hugging Face folder (its
`data/<component>/<split>.parquet` files).

The STEL format, its one reader and its one row type are `tasks.stel.tsv`: a TSV is read with it (Anchor 2 and the
votes may be absent: a file of triples), the rows of the other exports are renamed to its columns and checked by the
same row reader, and every row is kept as a `StelRecord` with its texts stripped. An ids-only export has no texts:
it is refused, naming `rebuild_benchmark`, which puts them back from one's own copy of the corpus.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from scoring.export.fields import PLAIN_FIELDS, TEXT_FIELDS, VOTES_TABLE
from tasks.error_codes import FILE_NOT_FOUND
from tasks.stel.tsv import COLUMNS, StelRecord, stel_row_parse, stel_tsv_parse

COLUMN_OF_FIELD = dict(zip(PLAIN_FIELDS, COLUMNS, strict=True))  # an export's field → its STEL column


def benchmark_read(path: Path | str, *, seen: dict[str, str] | None = None) -> list[StelRecord]:
    """All rows of one benchmark (a STEL TSV, a JSONL or Parquet export, or a hub export's folder); an
    ApplicationError naming the file and line (row) for anything malformed. `seen`: the IDs of the files read before
    (a set of files), each with where it appeared."""
    path = Path(path)
    seen = {} if seen is None else seen
    if path.is_dir():
        # Each component's config; the per-annotator votes table beside them is not a benchmark.
        files = sorted(f for f in (path / "data").glob("*/*.parquet") if f.parent.name != VOTES_TABLE)
        if not files:
            raise ApplicationError(f"{path}: a folder, but not a hub export (no data/<component>/<split>.parquet)")
        return [record for file in files for record in _rows_read(file, seen, parquet=True)]
    if not path.is_file():
        raise ApplicationError(f"benchmark file {path} does not exist", code=FILE_NOT_FOUND)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ApplicationError(f"cannot open benchmark file {path}: {exc}") from exc
    if data[:4] == b"PAR1" or data.lstrip()[:1] == b"{":  # Parquet's magic number, or JSON lines (by content)
        return _rows_read(path, seen, parquet=data[:4] == b"PAR1")
    try:
        text = data.decode("utf-8-sig")  # a BOM is not part of the header
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ApplicationError(f"{path}:{line}: not a readable TSV line: {exc}") from exc
    records = stel_tsv_parse(text, where=lambda line: f"{path}:{line}", empty=str(path), seen=seen)
    if not records:
        raise ApplicationError(f"{path}: the file has a header but no instances")
    return [record.stripped() for record in records]


def _rows(path: Path, *, parquet: bool) -> list[dict[str, Any]]:
    if parquet:
        import pyarrow.parquet as pq  # heavy: pyarrow loads only for a Parquet file (a TSV's scoring never needs it)

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a file that is not Parquet
            raise ApplicationError(f"{path}: not a readable Parquet file ({exc})") from None
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ApplicationError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
    return rows


def _rows_read(path: Path, seen: dict[str, str], *, parquet: bool) -> list[StelRecord]:
    """A JSONL or Parquet export's rows as STEL rows (line = row number, from 1)."""
    rows = _rows(path, parquet=parquet)
    if not rows:
        raise ApplicationError(f"{path}: the file has no instances")
    if not all(field in rows[0] for field in TEXT_FIELDS):
        raise ApplicationError(f"{path}: an ids-only export has no texts to score: rebuild it first with "
                               "rebuild_benchmark (from your own copy of the corpus)")
    records = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise ApplicationError(f"{path}:{number}: expected a JSON object")
        cells = {column: "" if row.get(field) is None else str(row[field])
                 for field, column in COLUMN_OF_FIELD.items()}
        records.append(stel_row_parse(cells, line=number, where=f"{path}:{number}", seen=seen).stripped())
    return records


def benchmark_set_read(paths: list[Path | str]) -> list[StelRecord]:
    """The instances of several files taken as one set; an instance ID may occur only once in a set."""
    seen: dict[str, str] = {}
    return [instance for path in paths for instance in benchmark_read(path, seen=seen)]
