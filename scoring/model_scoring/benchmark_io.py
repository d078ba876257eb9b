"""Reading STEL-format benchmark TSVs (the format of STEL's published files and of StyleCrowd's exports) for scoring.

The format and its one reader are `tasks.stel.tsv`: here a file is opened, read with it (Anchor 2 and the votes may
be absent: a file of triples), and its rows become `StelInstance`s with their texts stripped.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import ApplicationError
from tasks.error_codes import FILE_NOT_FOUND
from tasks.stel.tsv import stel_tsv_parse


@dataclass(frozen=True)
class StelInstance:
    id: str
    anchor1: str
    anchor2: str  # "" for a triple
    alternative1: str
    alternative2: str
    correct: int  # 1 = S1-S2, 2 = S2-S1
    component: str
    votes: int | None
    source: str  # "file:line", for error messages and the predictions file

    @property
    def is_quadruple(self) -> bool:
        return self.anchor2 != ""


def benchmark_read(path: Path | str, *, seen: dict[str, str] | None = None) -> list[StelInstance]:
    """All instances of one STEL TSV; an ApplicationError naming the file and line for anything malformed.
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
    return [StelInstance(
        id=r.id.strip(), anchor1=r.anchor_1.strip(), anchor2=r.anchor_2.strip(), alternative1=r.alternative_1.strip(),
        alternative2=r.alternative_2.strip(), correct=r.correct, component=r.style_type.strip(), votes=r.votes,
        source=r.where,
    ) for r in records]


def benchmark_set_read(paths: list[Path | str]) -> list[StelInstance]:
    """The instances of several files taken as one set; an instance ID may occur only once in a set."""
    seen: dict[str, str] = {}
    return [instance for path in paths for instance in benchmark_read(path, seen=seen)]
