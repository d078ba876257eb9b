"""Reading STEL-format benchmark TSVs (the format of STEL's published files and of StyleCrowd's exports).

Header: `<index>, Anchor 1, Anchor 2, Alternative 1.1, Alternative 1.2, Correct Alternative, ID,
# Votes out of 5 for Correct Alternative, style type`. A row whose Anchor 2 is empty (or a file without that
column) is a triple; `Correct Alternative` is 1 (order S1-S2: S1 goes with Anchor 1) or 2 (order S2-S1).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from core.errors import ApplicationError

REQUIRED_COLUMNS = ("Anchor 1", "Alternative 1.1", "Alternative 1.2", "Correct Alternative", "ID", "style type")
ANCHOR2 = "Anchor 2"
VOTES = "# Votes out of 5 for Correct Alternative"


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


def benchmark_read(path: Path | str) -> list[StelInstance]:
    """All instances of one STEL TSV; an ApplicationError naming the file and line for anything malformed."""
    path = Path(path)
    if not path.is_file():
        raise ApplicationError(f"benchmark file {path} does not exist", code="file_not_found")
    try:
        handle = path.open(encoding="utf-8-sig", newline="")  # a BOM is not part of the header
    except OSError as exc:
        raise ApplicationError(f"cannot open benchmark file {path}: {exc}") from exc
    instances: list[StelInstance] = []
    with handle:
        reader = csv.DictReader(handle, delimiter="\t")
        try:
            header = reader.fieldnames
        except (csv.Error, UnicodeDecodeError) as exc:
            raise ApplicationError(f"{path}:1: cannot read the header: {exc}") from exc
        if not header:
            raise ApplicationError(f"{path}: the file is empty (expected a STEL header line)")
        missing = [column for column in REQUIRED_COLUMNS if column not in header]
        if missing:
            raise ApplicationError(
                f"{path}:1: missing column(s) {', '.join(repr(c) for c in missing)}; a STEL benchmark needs "
                f"{', '.join(repr(c) for c in REQUIRED_COLUMNS)} (and optionally {ANCHOR2!r}, {VOTES!r})",
                code="missing_columns",
            )
        try:
            for row in reader:
                instances.append(_instance(row, f"{path}:{reader.line_num}"))
        except (csv.Error, UnicodeDecodeError) as exc:
            raise ApplicationError(f"{path}:{reader.line_num}: not a readable TSV line: {exc}") from exc
    if not instances:
        raise ApplicationError(f"{path}: the file has a header but no instances")
    return instances


def _instance(row: dict[str, str | None], where: str) -> StelInstance:
    if None in row:  # DictReader puts surplus cells under the key None
        raise ApplicationError(f"{where}: the line has more cells than the header")

    def cell(column: str) -> str:
        return (row.get(column) or "").strip()

    for column in ("Anchor 1", "Alternative 1.1", "Alternative 1.2", "ID", "style type"):
        if not cell(column):
            raise ApplicationError(f"{where}: column {column!r} is empty")
    raw_correct = cell("Correct Alternative")
    try:
        correct = int(float(raw_correct))
    except ValueError:
        correct = -1
    if correct not in (1, 2):
        raise ApplicationError(f"{where}: 'Correct Alternative' must be 1 or 2, not {raw_correct!r}")
    raw_votes = cell(VOTES)
    try:
        votes = int(float(raw_votes)) if raw_votes else None
    except ValueError as exc:
        raise ApplicationError(f"{where}: {VOTES!r} must be a number or empty, not {raw_votes!r}") from exc
    return StelInstance(
        id=cell("ID"), anchor1=cell("Anchor 1"), anchor2=cell(ANCHOR2), alternative1=cell("Alternative 1.1"),
        alternative2=cell("Alternative 1.2"), correct=correct, component=cell("style type"), votes=votes,
        source=where,
    )


def benchmark_set_read(paths: list[Path | str]) -> list[StelInstance]:
    """The instances of several files taken as one set; an instance ID may occur only once in a set."""
    instances: list[StelInstance] = []
    seen: dict[str, str] = {}
    for path in paths:
        for instance in benchmark_read(path):
            if instance.id in seen:
                raise ApplicationError(f"{instance.source}: instance ID {instance.id!r} already appeared at "
                                       f"{seen[instance.id]}", code="duplicate_id")
            seen[instance.id] = instance.source
            instances.append(instance)
    return instances
