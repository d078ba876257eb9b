"""Reading STEL-format benchmark TSVs (the format of STEL's published files and of StyleCrowd's exports) for scoring.

The format, its one reader and its one row type are `tasks.stel.tsv`: here a file is opened, read with it (Anchor 2
and the votes may be absent: a file of triples), and its rows are kept as `StelRecord`s with their texts stripped.
"""
from __future__ import annotations

from pathlib import Path

from core.errors import ApplicationError
from tasks.error_codes import FILE_NOT_FOUND
from tasks.stel.tsv import StelRecord, stel_tsv_parse


def benchmark_read(path: Path | str, *, seen: dict[str, str] | None = None) -> list[StelRecord]:
    """All rows of one STEL TSV; an ApplicationError naming the file and line for anything malformed.
    `seen`: the IDs of the files read before (a set of files), each with where it appeared."""
    path = Path(path)
    if not path.is_file():
        raise ApplicationError(f"benchmark file {path} does not exist", code=FILE_NOT_FOUND)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ApplicationError(f"cannot open benchmark file {path}: {exc}") from exc
    try:
        text = data.decode("utf-8-sig")  # a BOM is not part of the header
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ApplicationError(f"{path}:{line}: not a readable TSV line: {exc}") from exc
    records = stel_tsv_parse(text, where=lambda line: f"{path}:{line}", empty=str(path), seen=seen)
    if not records:
        raise ApplicationError(f"{path}: the file has a header but no instances")
    return [record.stripped() for record in records]


def benchmark_set_read(paths: list[Path | str]) -> list[StelRecord]:
    """The instances of several files taken as one set; an instance ID may occur only once in a set."""
    seen: dict[str, str] = {}
    return [instance for path in paths for instance in benchmark_read(path, seen=seen)]
