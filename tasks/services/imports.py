"""Corpus import: parse a source in one of the supported formats and store it atomically."""
from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from core.errors import ApplicationError
from tasks.models import Corpus, Order, ParallelPair, Setup, StyleComponent, TaskInstance

BULK_BATCH = 5000


@dataclass
class PairRow:
    """One parsed pair: `text_1` in the component's style 1, `text_2` in style 2."""

    source_id: str
    text_1: str
    text_2: str
    metadata: dict[str, Any] = field(default_factory=dict)


def component_get(*, name: str) -> StyleComponent:
    try:
        return StyleComponent.objects.get(name=name)
    except StyleComponent.DoesNotExist:
        known = ", ".join(StyleComponent.objects.values_list("name", flat=True))
        raise ApplicationError(f"unknown style component '{name}' (known: {known})", code="unknown_component") from None


@transaction.atomic
def corpus_store(
    *,
    name: str,
    component: StyleComponent,
    import_format: str,
    pairs: Sequence[PairRow],
    source: str = "",
    licence: str = "",
    params: dict[str, Any] | None = None,
    n_rows_read: int | None = None,
    n_skipped: int = 0,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Create corpus `name` with `pairs` in one transaction; refuse an existing name unless `replace`."""
    if not name.strip():
        raise ApplicationError("corpus name must not be empty", code="invalid_name")
    existing = Corpus.objects.select_for_update().filter(name=name).first()
    if existing is not None:
        if not replace:
            raise ApplicationError(
                f"corpus '{name}' exists already; pass --replace to overwrite it", code="corpus_exists", status=409
            )
        existing.delete()
    seen: dict[str, int] = {}
    for index, pair in enumerate(pairs):
        if not pair.text_1.strip() or not pair.text_2.strip():
            raise ApplicationError(f"pair {pair.source_id!r} has an empty text", code="empty_text")
        if pair.source_id in seen:
            raise ApplicationError(
                f"duplicate id {pair.source_id!r} (pairs {seen[pair.source_id] + 1} and {index + 1})",
                code="duplicate_id",
            )
        seen[pair.source_id] = index
    corpus = Corpus.objects.create(
        name=name, component=component, import_format=import_format, source=source, licence=licence,
        import_params=params or {}, n_pairs=len(pairs),
        n_rows_read=len(pairs) + n_skipped if n_rows_read is None else n_rows_read, n_skipped=n_skipped,
    )
    total = len(pairs)
    for start in range(0, total, BULK_BATCH):
        chunk = pairs[start:start + BULK_BATCH]
        ParallelPair.objects.bulk_create(
            [
                ParallelPair(corpus=corpus, position=start + offset, source_id=p.source_id, text_1=p.text_1,
                             text_2=p.text_2, metadata=p.metadata)
                for offset, p in enumerate(chunk)
            ],
            batch_size=BULK_BATCH,
        )
        if progress:
            progress(min(start + BULK_BATCH, total), total)
    return corpus


# --- parsing -------------------------------------------------------------------------------------------

FORMATS = ("aligned", "turkcorpus", "pairs", "stel")
STEL_HEADER = [
    "", "Anchor 1", "Anchor 2", "Alternative 1.1", "Alternative 1.2", "Correct Alternative", "ID",
    "# Votes out of 5 for Correct Alternative", "style type",
]
# Style tags that STEL's published IDs use (QQ_ction-0-wiki-0_…), mapped to our component labels.
STEL_ID_TAGS = {
    "ction": "contracted", "wiki": "expanded", "leet": "substituted", "norm": "plain",
    "formal": "formal", "informal": "informal", "f": "formal", "i": "informal",
    "complex": "complex", "simple": "simple", "c": "complex", "s": "simple",
}


def read_text(path: str | Path) -> str:
    """Read a UTF-8 file; undecodable bytes are reported with file and line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ApplicationError(f"{path}: file not found", code="file_not_found") from None
    except IsADirectoryError:
        raise ApplicationError(f"{path}: is a directory, not a file", code="not_a_file") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ApplicationError(
            f"{path}, line {line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            code="invalid_encoding",
        ) from None


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start an empty one
    return [line.rstrip("\r") for line in lines]


def parse_aligned(paths: Sequence[str | Path]) -> tuple[list[PairRow], dict[str, Any]]:
    """Two files, line i of the first (style 1) parallel to line i of the second (style 2)."""
    if len(paths) != 2:
        raise ApplicationError(
            f"format 'aligned' needs exactly two files (style 1, style 2); got {len(paths)}", code="wrong_file_count"
        )
    first, second = (_lines(read_text(p)) for p in paths)
    if len(first) != len(second):
        raise ApplicationError(
            f"{paths[0]} has {len(first)} lines but {paths[1]} has {len(second)}: aligned files need equal line counts",
            code="unequal_line_counts",
        )
    rows = []
    for number, (text_1, text_2) in enumerate(zip(first, second, strict=True), start=1):
        for path, text in ((paths[0], text_1), (paths[1], text_2)):
            if not text.strip():
                raise ApplicationError(f"{path}, line {number}: empty text", code="empty_text")
        rows.append(PairRow(source_id=str(number), text_1=text_1.strip(), text_2=text_2.strip()))
    return rows, {"lines": len(rows)}


def parse_turkcorpus(
    paths: Sequence[str | Path], *, seed: int, min_edit_distance: int
) -> tuple[list[PairRow], dict[str, Any]]:
    """TurkCorpus organized TSV: pair each complex sentence with one non-empty turk_* simplification drawn
    uniformly with the seeded RNG; drop pairs whose character Levenshtein distance is below the threshold."""
    from rapidfuzz.distance import Levenshtein

    rng = random.Random(seed)
    rows: list[PairRow] = []
    stats = {"rows_read": 0, "skipped_too_similar": 0, "skipped_no_simplification": 0}
    for path in paths:
        prefix = f"{Path(path).stem}:" if len(paths) > 1 else ""
        for number, line in enumerate(_lines(read_text(path)), start=1):
            if not line.strip():
                continue
            cells = line.split("\t")
            if len(cells) < 4:
                raise ApplicationError(
                    f"{path}, line {number}: expected id, complex, simple and turk_0…turk_7 separated by tabs; "
                    f"found {len(cells)} column(s)",
                    code="missing_columns",
                )
            stats["rows_read"] += 1
            row_id, complex_text = cells[0].strip(), cells[1].strip()
            if not row_id:
                raise ApplicationError(f"{path}, line {number}: empty id", code="empty_id")
            if not complex_text:
                raise ApplicationError(f"{path}, line {number}: empty complex sentence", code="empty_text")
            turks = [(k, cell.strip()) for k, cell in enumerate(cells[3:]) if cell.strip()]
            if not turks:
                stats["skipped_no_simplification"] += 1
                continue
            turker, simple_text = turks[rng.randrange(len(turks))]
            distance = Levenshtein.distance(complex_text, simple_text)
            if distance < min_edit_distance:
                stats["skipped_too_similar"] += 1
                continue
            rows.append(PairRow(
                source_id=f"{prefix}{row_id}", text_1=complex_text, text_2=simple_text,
                metadata={"turker": f"t{turker}", "edit_distance": distance, "line": number},
            ))
    return rows, stats


def parse_pairs(paths: Sequence[str | Path]) -> tuple[list[PairRow], dict[str, Any]]:
    """CSV, TSV or JSONL with columns text_a (style 1), text_b (style 2) and an optional id."""
    rows: list[PairRow] = []
    origin: dict[str, str] = {}
    for path in paths:
        suffix = Path(path).suffix.lower()
        prefix = f"{Path(path).stem}:" if len(paths) > 1 else ""
        text = read_text(path)
        if suffix in {".jsonl", ".ndjson"}:
            records = _jsonl_records(path, text)
        elif suffix in {".csv", ".tsv", ".tab"}:
            records = _delimited_records(path, text, "\t" if suffix in {".tsv", ".tab"} else ",")
        else:
            raise ApplicationError(
                f"{path}: format 'pairs' reads .csv, .tsv or .jsonl files; cannot tell the format of '{suffix}'",
                code="unknown_file_type",
            )
        for number, record in records:
            where = f"{path}, line {number}"
            text_a, text_b = (str(record.get(key) or "").strip() for key in ("text_a", "text_b"))
            if not text_a or not text_b:
                raise ApplicationError(f"{where}: empty {'text_a' if not text_a else 'text_b'}", code="empty_text")
            raw_id = record.get("id")
            source_id = prefix + (str(raw_id).strip() if raw_id not in (None, "") else str(number))
            if source_id in origin:
                raise ApplicationError(
                    f"{where}: duplicate id {source_id!r} (first seen at {origin[source_id]})", code="duplicate_id"
                )
            origin[source_id] = where
            rows.append(PairRow(source_id=source_id, text_1=text_a, text_2=text_b))
    return rows, {"rows_read": len(rows)}


def _jsonl_records(path: str | Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ApplicationError(f"{path}, line {number}: invalid JSON ({exc.msg})", code="invalid_json") from None
        if not isinstance(record, dict):
            raise ApplicationError(f"{path}, line {number}: expected a JSON object", code="invalid_json")
        missing = [key for key in ("text_a", "text_b") if key not in record]
        if missing:
            raise ApplicationError(
                f"{path}, line {number}: missing field(s) {', '.join(missing)}", code="missing_columns"
            )
        records.append((number, record))
    return records


def _delimited_records(path: str | Path, text: str, delimiter: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    header = [name.strip() for name in (reader.fieldnames or [])]
    missing = [key for key in ("text_a", "text_b") if key not in header]
    if missing:
        raise ApplicationError(
            f"{path}, line 1: missing column(s) {', '.join(missing)} (found: {', '.join(header) or 'no header'})",
            code="missing_columns",
        )
    reader.fieldnames = header
    records = []
    for record in reader:
        if None in record:
            raise ApplicationError(
                f"{path}, line {reader.line_num}: more fields than the header has", code="malformed_row"
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
    """STEL's own TSV export (index, Anchor 1, Anchor 2, Alternative 1.1, Alternative 1.2, Correct Alternative,
    ID, # Votes out of 5 for Correct Alternative, style type)."""
    rows: list[StelRow] = []
    seen: dict[str, str] = {}
    for path in paths:
        lines = _lines(read_text(path))
        if not lines:
            raise ApplicationError(f"{path}: empty file", code="empty_file")
        header = lines[0].split("\t")
        missing = [name for name in STEL_HEADER[1:] if name not in header]
        if missing:
            raise ApplicationError(
                f"{path}, line 1: not a STEL TSV; missing column(s) {', '.join(missing)}", code="missing_columns"
            )
        col = {name: header.index(name) for name in STEL_HEADER[1:]}
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            # STEL wrote its TSVs with pandas: cells holding quotes are CSV-quoted ("a ""b"" c"), so unquote them.
            cells = next(csv.reader([line], delimiter="\t"))
            if len(cells) != len(header):
                raise ApplicationError(
                    f"{path}, line {number}: {len(cells)} fields, expected {len(header)}", code="malformed_row"
                )
            values = {name: cells[index] for name, index in col.items()}
            get = values.__getitem__
            where = f"{path}, line {number}"
            for name in ("Anchor 1", "Alternative 1.1", "Alternative 1.2", "ID", "style type"):
                if not get(name).strip():
                    raise ApplicationError(f"{where}: empty '{name}'", code="empty_text")
            try:
                correct = int(get("Correct Alternative"))
                if correct not in (1, 2):
                    raise ValueError
            except ValueError:
                raise ApplicationError(
                    f"{where}: 'Correct Alternative' must be 1 or 2, got {get('Correct Alternative')!r}",
                    code="invalid_value",
                ) from None
            votes_text = get("# Votes out of 5 for Correct Alternative").strip()
            try:
                votes = int(float(votes_text)) if votes_text else None
            except ValueError:
                raise ApplicationError(
                    f"{where}: votes must be a number, got {votes_text!r}", code="invalid_value"
                ) from None
            stel_id = get("ID")
            if stel_id in seen:
                raise ApplicationError(
                    f"{where}: duplicate ID {stel_id!r} (first at {seen[stel_id]})", code="duplicate_id"
                )
            seen[stel_id] = where
            rows.append(StelRow(
                line=number, anchor_1=get("Anchor 1"), anchor_2=get("Anchor 2"), sentence_1=get("Alternative 1.1"),
                sentence_2=get("Alternative 1.2"), correct_alternative=correct, stel_id=stel_id, votes=votes,
                style_type=get("style type").strip(),
            ))
    return rows


def _stel_styles(row: StelRow, component: StyleComponent) -> tuple[int, int, bool]:
    """(style of A1, style of S1, inferred_from_id). STEL's TSV does not say which style a text has; its IDs
    name style tags (QQ_ction-0-wiki-0_wiki-73-ction-73). Unknown tags fall back to A1 = style 1."""
    parts = row.stel_id.split("_")
    if len(parts) >= 3:
        anchor_tag = parts[1].split("-")[0]
        sentence_tag = parts[2].split("-")[0]
        labels = {component.label_1: 1, component.label_2: 2}
        a1 = labels.get(STEL_ID_TAGS.get(anchor_tag, ""))
        s1 = labels.get(STEL_ID_TAGS.get(sentence_tag, ""))
        if a1 and s1 and ((a1 == s1) == (row.correct_alternative == 1)):
            return a1, s1, True
    a1 = 1
    s1 = a1 if row.correct_alternative == 1 else 3 - a1
    return a1, s1, False


@transaction.atomic
def corpus_store_stel(
    *, name: str, component: StyleComponent | None, rows: Sequence[StelRow], paths: Sequence[str | Path],
    replace: bool, progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Store published STEL instances as task instances of a corpus without pairs."""
    style_types = sorted({row.style_type for row in rows})
    if not rows:
        raise ApplicationError(f"{', '.join(map(str, paths))}: no instances found", code="empty_file")
    if component is None:
        if len(style_types) != 1:
            raise ApplicationError(
                f"the files mix style types {style_types}; import each style type as its own corpus",
                code="mixed_components",
            )
        component = component_get(name=style_types[0])
    for row in rows:
        if row.style_type != component.name:
            raise ApplicationError(
                f"line {row.line}: style type {row.style_type!r} differs from --component {component.name!r}",
                code="component_mismatch",
            )
    corpus = corpus_store(
        name=name, component=component, import_format=Corpus.Format.STEL, pairs=[],
        source="; ".join(str(p) for p in paths),
        licence="STEL (Wegmann & Nguyen 2021), MIT licence",
        params={"files": [str(p) for p in paths]}, n_rows_read=len(rows), replace=replace,
    )
    instances = []
    for position, row in enumerate(rows):
        a1, s1, inferred = _stel_styles(row, component)
        quadruple = bool(row.anchor_2.strip())
        instances.append(TaskInstance(
            stel_id=row.stel_id, setup=Setup.QUADRUPLE if quadruple else Setup.TRIPLE, component=component,
            corpus=corpus, position=position, family=row.stel_id, anchor_1=row.anchor_1, anchor_2=row.anchor_2,
            sentence_1=row.sentence_1, sentence_2=row.sentence_2, anchor_1_style=a1,
            anchor_2_style=(3 - a1) if quadruple else None, sentence_1_style=s1, sentence_2_style=3 - s1,
            correct_order=Order.S1_S2 if row.correct_alternative == 1 else Order.S2_S1,
            published_votes=row.votes, metadata={"styles_from_id": inferred, "line": row.line},
        ))
    TaskInstance.objects.bulk_create(instances, batch_size=BULK_BATCH)
    if progress:
        progress(len(instances), len(instances))
    corpus.n_instances = len(instances)
    corpus.save(update_fields=["n_instances"])
    return corpus


def corpus_import(
    *,
    name: str,
    component: str | None,
    import_format: str,
    paths: Sequence[str | Path],
    seed: int = 0,
    min_edit_distance: int = 4,
    replace: bool = False,
    source: str = "",
    licence: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Corpus, dict[str, Any]]:
    """Parse `paths` in `import_format` and store them as corpus `name`; returns the corpus and a summary.

    Nothing is stored when any line is bad: parsing finishes before the one transaction that writes."""
    if import_format not in FORMATS:
        raise ApplicationError(
            f"unknown format {import_format!r} (one of: {', '.join(FORMATS)})", code="unknown_format"
        )
    if not paths:
        raise ApplicationError("no input files given", code="no_files")
    if min_edit_distance < 0:
        raise ApplicationError("--min-edit-distance must be 0 or more", code="invalid_value")
    if import_format == "stel":
        comp = component_get(name=component) if component else None
        corpus = corpus_store_stel(
            name=name, component=comp, rows=parse_stel(paths), paths=paths, replace=replace, progress=progress
        )
        return corpus, {"corpus": corpus.name, "component": corpus.component.name, "format": import_format,
                        "instances": corpus.n_instances, "pairs": 0, "skipped": 0}
    if not component:
        raise ApplicationError("--component is required for this format", code="missing_component")
    comp = component_get(name=component)
    params: dict[str, Any] = {"files": [str(p) for p in paths]}
    if import_format == "aligned":
        pairs, stats = parse_aligned(paths)
    elif import_format == "turkcorpus":
        pairs, stats = parse_turkcorpus(paths, seed=seed, min_edit_distance=min_edit_distance)
        params.update(seed=seed, min_edit_distance=min_edit_distance)
    else:
        pairs, stats = parse_pairs(paths)
    skipped = stats.get("skipped_too_similar", 0) + stats.get("skipped_no_simplification", 0)
    params["stats"] = stats
    corpus = corpus_store(
        name=name, component=comp, import_format=import_format, pairs=pairs,
        source=source or "; ".join(str(p) for p in paths), licence=licence, params=params,
        n_rows_read=stats.get("rows_read", len(pairs)), n_skipped=skipped, replace=replace, progress=progress,
    )
    return corpus, {"corpus": corpus.name, "component": comp.name, "format": import_format, "pairs": len(pairs),
                    "skipped": skipped, **{k: v for k, v in stats.items() if k.startswith("skipped_")},
                    "rows_read": corpus.n_rows_read, "seed": seed if import_format == "turkcorpus" else None}
