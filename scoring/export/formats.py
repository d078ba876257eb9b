"""Export formats, in one registry: STEL TSV (exactly STEL's format), JSONL, Parquet, and the Hugging Face folder.

Data files are reproducible byte for byte from the same database: rows in a fixed order (corpus name, setup,
position, id), no timestamps inside them, written to a temporary name and renamed. The card and the Croissant
metadata beside them carry the date and everything else needed to cite and reproduce the export.

The ids-only form (for corpora whose licence forbids copying the text) has no text columns: each row names the
corpus pairs its texts came from, their styles, and a sha256 of its texts, so that `rebuild_benchmark` can put the
texts back from one's own copy of the corpus and check every row.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from core.errors import ApplicationError
from scoring.error_codes import INVALID_FORMAT
from scoring.export.fields import IDS_FIELDS, PLAIN_FIELDS, TEXT_FIELDS
from scoring.export.selection import SPLIT_RANK, STEL_PUBLISHED_K, UNCERTAINTY_COLUMNS
from tasks.stel import tsv as stel_tsv

STEL_COLUMNS = stel_tsv.COLUMNS  # the format is defined once, in tasks.stel.tsv
# The per-item uncertainty (scoring.agreement.uncertainty), last in every format but STEL's TSV (STEL's columns only).
UNCERTAINTY_FIELDS = [*UNCERTAINTY_COLUMNS, "uncertainty_model"]


@dataclass(frozen=True)
class FieldSpec:
    arrow: pa.DataType
    croissant: str  # schema.org data type
    description: str


FIELDS: dict[str, FieldSpec] = {
    "index": FieldSpec(pa.int64(), "sc:Integer", "Row number in this file (0-based)."),
    "anchor_1": FieldSpec(pa.string(), "sc:Text", "Anchor 1 (A1)."),
    "anchor_2": FieldSpec(pa.string(), "sc:Text", "Anchor 2 (A2): A1's paraphrase in the other style; empty in "
                                                  "triples and style-or-content instances."),
    "alternative_1_1": FieldSpec(pa.string(), "sc:Text", "Alternative 1.1 (S1)."),
    "alternative_1_2": FieldSpec(pa.string(), "sc:Text", "Alternative 1.2 (S2)."),
    "correct_alternative": FieldSpec(pa.int8(), "sc:Integer", "1 = order S1-S2 (Alternative 1.1 goes with Anchor "
                                                              "1), 2 = order S2-S1."),
    "id": FieldSpec(pa.string(), "sc:Text", "STEL-style instance id (names the style tags and the source ids)."),
    "votes": FieldSpec(pa.int16(), "sc:Integer", "Correct answers among the first k valid responses (or the "
                                                 "published STEL votes); empty when not annotated."),
    "style_type": FieldSpec(pa.string(), "sc:Text", "The style component (STEL's style type)."),
    "setup": FieldSpec(pa.string(), "sc:Text", "quadruple, triple or style-or-content."),
    "corpus": FieldSpec(pa.string(), "sc:Text", "The corpus the texts come from (as imported)."),
    "anchor_pair": FieldSpec(pa.string(), "sc:Text", "Source id of the pair A1 (and A2) come from; empty for "
                                                     "instances imported from a STEL file."),
    "sentence_pair": FieldSpec(pa.string(), "sc:Text", "Source id of the other pair (S1 and S2, or the same-style "
                                                       "sentence of a style-or-content instance)."),
    "anchor_1_style": FieldSpec(pa.int8(), "sc:Integer", "Style (1 or 2) of A1 in its pair."),
    "sentence_1_style": FieldSpec(pa.int8(), "sc:Integer", "Style (1 or 2) of S1."),
    "p_correct": FieldSpec(pa.float64(), "sc:Float", "Probability that the correct alternative is the answer careful "
                           "annotators give (posterior of the model in uncertainty_model); empty when not annotated."),
    "p_correct_low": FieldSpec(pa.float64(), "sc:Float", "Lower end of the 90% interval of p_correct (the estimated "
                               "model's own uncertainty)."),
    "p_correct_high": FieldSpec(pa.float64(), "sc:Float", "Upper end of the 90% interval of p_correct."),
    "uncertainty_model": FieldSpec(pa.string(), "sc:Text", "The model p_correct comes from: one-coin Dawid-Skene over "
                                   "annotators (with item difficulty classes where the answers are overdispersed), "
                                   "or the pooled one-coin model for count-only votes (no annotator identity); "
                                   "empty when not annotated."),
    "text_sha256": FieldSpec(pa.string(), "sc:Text", "sha256 of A1, A2, S1 and S2 joined by U+001F: a rebuilt row "
                                                     "must match it."),
}


def text_digest(a1: str, a2: str, s1: str, s2: str) -> str:
    return hashlib.sha256("\x1f".join((a1, a2, s1, s2)).encode("utf-8")).hexdigest()


def row_columns(*, ids_only: bool, with_setup: bool = False) -> list[str]:
    if ids_only:
        return ["index", *IDS_FIELDS, *UNCERTAINTY_FIELDS]
    return ["index", *PLAIN_FIELDS, *(["setup"] if with_setup else []), *UNCERTAINTY_FIELDS]


def _column(frame: pd.DataFrame, name: str) -> list[Any]:
    if name == "index":
        return list(range(len(frame)))
    if name == "votes":
        return [None if v < 0 else int(v) for v in frame["votes"]]
    if name == "text_sha256":
        return [text_digest(*texts) for texts in zip(*(frame[f] for f in TEXT_FIELDS), strict=True)]
    if name in UNCERTAINTY_COLUMNS:
        return [None if v is None or pd.isna(v) else float(v) for v in frame[name]]
    if name in ("anchor_pair", "sentence_pair"):
        return [None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v) for v in frame[name]]
    if name in ("correct_alternative", "anchor_1_style", "sentence_1_style"):
        return [int(v) for v in frame[name]]
    return [str(v) for v in frame[name]]


def rows_table(frame: pd.DataFrame, columns: list[str]) -> pa.Table:
    """The rows as an Arrow table with the fields' types: what Parquet stores and JSONL spells out."""
    schema = pa.schema([(name, FIELDS[name].arrow) for name in columns])
    return pa.table({name: pa.array(_column(frame, name), FIELDS[name].arrow) for name in columns}, schema=schema)


def atomic_write(path: Path, write: Callable[[Path], Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def file_facts(path: Path, *, root: Path, rows: int, **extra: Any) -> dict[str, Any]:
    data = path.read_bytes()
    return {"path": path.relative_to(root).as_posix(), "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data), "rows": rows, **extra}


def write_stel_tsv(frame: pd.DataFrame, path: Path) -> None:
    """STEL's TSV, by STEL's one writer (`tasks.stel.tsv.stel_tsv_write`)."""
    columns = {
        stel_tsv.ANCHOR_1: frame["anchor_1"], stel_tsv.ANCHOR_2: frame["anchor_2"],
        stel_tsv.ALTERNATIVE_1: frame["alternative_1_1"], stel_tsv.ALTERNATIVE_2: frame["alternative_1_2"],
        stel_tsv.CORRECT: frame["correct_alternative"], stel_tsv.ID: frame["id"], stel_tsv.VOTES: frame["votes_text"],
        stel_tsv.STYLE_TYPE: frame["style_type"],
    }
    atomic_write(path, lambda tmp: stel_tsv.stel_tsv_write(columns, tmp))


def write_jsonl(frame: pd.DataFrame, path: Path, *, columns: list[str]) -> None:
    records = rows_table(frame, columns).to_pylist()

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")

    atomic_write(path, write)


def write_parquet(frame: pd.DataFrame, path: Path, *, columns: list[str]) -> None:
    table = rows_table(frame, columns)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


# --- the registry -----------------------------------------------------------------------------------------------------

Writer = Callable[[pd.DataFrame, Path, bool], list[dict[str, Any]]]


@dataclass(frozen=True)
class ExportFormat:
    name: str
    label: str
    extension: str  # of the data file; "" for a folder
    encoding: str  # the data files' media type, as Croissant names it
    write: Writer  # (frame, out, ids_only) → the written files' facts (path relative to the card's folder)
    ids_only: bool = True  # can it hold the ids-only form?

    @property
    def folder(self) -> bool:
        return not self.extension


def _file_writer(write: Callable[..., None], *, stel: bool = False) -> Writer:
    def writer(frame: pd.DataFrame, out: Path, ids_only: bool) -> list[dict[str, Any]]:
        if stel:
            write(frame, out)
        else:
            write(frame, out, columns=row_columns(ids_only=ids_only))
        return [file_facts(out, root=out.parent, rows=len(frame))]

    return writer


def hub_data_write(frame: pd.DataFrame, folder: Path, *, ids_only: bool) -> list[dict[str, Any]]:
    """data/<component>/<split>.parquet, rows in the export's order, `index` counting within each file."""
    columns = row_columns(ids_only=ids_only, with_setup=not ids_only)
    files = []
    for component in sorted(set(frame["style_type"])):
        of_component = frame[frame["style_type"] == component]
        for split in sorted(set(of_component["split"]), key=SPLIT_RANK.__getitem__):
            rows = of_component[of_component["split"] == split]
            path = folder / "data" / str(component) / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(rows, path, columns=columns)
            files.append(file_facts(path, root=folder, rows=len(rows), config=str(component), split=split))
    return files


def _hub_writer(frame: pd.DataFrame, out: Path, ids_only: bool) -> list[dict[str, Any]]:
    return hub_data_write(frame, out, ids_only=ids_only)


EXPORT_FORMATS: dict[str, ExportFormat] = {spec.name: spec for spec in (
    ExportFormat("stel-tsv", "STEL TSV", "tsv", "text/tab-separated-values", _file_writer(write_stel_tsv, stel=True),
                 ids_only=False),
    ExportFormat("jsonl", "JSON lines", "jsonl", "application/jsonlines", _file_writer(write_jsonl)),
    ExportFormat("parquet", "Parquet", "parquet", "application/x-parquet", _file_writer(write_parquet)),
    ExportFormat("hub", "Hugging Face folder (README, Parquet per config and split, Croissant)", "",
                 "application/x-parquet", _hub_writer),
)}
FORMATS = tuple(EXPORT_FORMATS)
# The formats written as one file: what `rebuild_benchmark` can write (a folder format needs a whole export).
FILE_FORMATS = tuple(name for name, spec in EXPORT_FORMATS.items() if not spec.folder)
FORMAT_CHOICES = [(spec.name, spec.label) for spec in EXPORT_FORMATS.values()]


def format_get(name: str) -> ExportFormat:
    spec = EXPORT_FORMATS.get(name)
    if spec is None:
        raise ApplicationError(f"Format must be one of {', '.join(FORMATS)}, not '{name}'.", code=INVALID_FORMAT,
                               field="format")
    return spec


def card_paths(out: Path, *, folder: bool = False) -> tuple[Path, Path]:
    """The card (JSON, Markdown) of an export written to `out`: beside a file, inside a folder (README.md)."""
    if folder:
        return out / "card.json", out / "README.md"
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.card.json"), out.with_name(f"{stem}.card.md")


def croissant_path(out: Path, *, folder: bool) -> Path:
    if folder:
        return out / "croissant.json"
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.croissant.json")


STEL_VOTES_COLUMN = STEL_COLUMNS[6]


def votes_column_facts(*, fmt: str, k_values: list[int], published: bool) -> dict[str, Any]:
    """What the votes column counts: correct answers out of k, for each k the votes came from. STEL TSV keeps
    STEL's header `# Votes out of 5 …` whatever k was, since STEL's readers look the column up by that name."""
    out_of = sorted(set(k_values) | ({STEL_PUBLISHED_K} if published else set()))
    column = STEL_VOTES_COLUMN if fmt == "stel-tsv" else "votes"
    if not out_of:
        return {"column": column, "out_of": [], "note": "No instance has votes yet: the column is empty."}
    ks = " or ".join(f"k = {k}" for k in out_of)
    note = f"Votes out of {ks}: correct answers among the first k valid responses per instance"
    if published:
        note += " (STEL's published votes: out of 5)"
    if fmt == "stel-tsv" and out_of != [STEL_PUBLISHED_K]:
        note += f". The column's header `{STEL_VOTES_COLUMN}` is STEL's, kept for compatibility with its readers"
    return {"column": column, "out_of": out_of, "note": note + "."}


def source_public(source: str) -> str:
    """A corpus's source as a card may show it: a server path becomes its file name ("a; b" parts each)."""
    parts = [part.strip() for part in (source or "").split(";")]
    return "; ".join(Path(part).name if part.startswith(("/", "~")) or ":\\" in part[:3] else part
                     for part in parts if part)


def reproduce_command(params: dict[str, Any], out: Path) -> str:
    parts = ["python", "manage.py", "export_benchmark", "--format", params["format"]]
    for key in ("corpus", "component", "setup", "study", "name"):
        if params.get(key):
            parts += [f"--{key}", params[key]]
    if params.get("ids_only"):
        parts.append("--ids-only")
    if params.get("salted"):
        parts += ["--salt", "SALT"]  # a placeholder: the release salt is never written down with the export
    # The file's name, never the server's folder: the card travels (and is shown in the admin).
    parts += ["--status", params["status"], "--out", out.name]
    return shlex.join(parts)
