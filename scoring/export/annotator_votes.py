"""The per-annotator votes table of a benchmark export: every valid vote on the exported instances, each with its
annotator's keyed pseudonym (core.pseudonyms, re-keyed by the export's salt), never a platform id.

Valid means what the votes column counts from: item answers (no screening answers) that are valid, by participants
who were not excluded. Only studies that publish per-annotator labels (`Study.release_annotator_labels`) give rows;
the card says which did not. Rows come in a fixed order (instance, study, time, id) with no timestamps, so that the
same database writes the same bytes.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from annotation.models import Response
from core.errors import ApplicationError
from core.pseudonyms import pseudonym
from scoring.error_codes import INVALID_FILE
from scoring.export.fields import VOTES_TABLE
from scoring.export.formats import FieldSpec, atomic_write

VOTES_FORMATS = ("jsonl", "parquet", "hub")  # STEL's TSV is STEL's format: no table beside it
VOTES_FIELDS: dict[str, FieldSpec] = {
    "id": FieldSpec(pa.string(), "sc:Text", "The instance's STEL-style id, as in the instances' rows."),
    "corpus": FieldSpec(pa.string(), "sc:Text", "The corpus of the instance (with `id`, the instance's key)."),
    "study": FieldSpec(pa.string(), "sc:Text", "The study the vote was given in."),
    "annotator": FieldSpec(pa.string(), "sc:Text", "The annotator's keyed pseudonym (HMAC-SHA256; one per person "
                                                   "within this release, not joinable across salted releases)."),
    "answer": FieldSpec(pa.string(), "sc:Text", "The answer given (an order S1-S2 / S2-S1, or a sentence)."),
    "correct": FieldSpec(pa.bool_(), "sc:Boolean", "Whether the answer is the instance's correct one."),
}
VOTES_COLUMNS = list(VOTES_FIELDS)


def votes_frame(*, frame: pd.DataFrame, studies: list[Any], salt: str = "") -> tuple[pd.DataFrame, dict[str, Any]]:
    """The table's rows for the exported instances, and what the card says of it (studies in and out, counts)."""
    published = [s for s in studies if s.release_annotator_labels]
    keys = dict(zip(frame["instance_id"].astype(int), zip(frame["id"], frame["corpus"], strict=True), strict=True))
    rows = (Response.objects.filter(study__in=published, is_valid=True, is_screening=False,
                                    participant__excluded=False, study_item__instance_id__in=list(keys))
            .order_by("study_item__instance_id", "study__slug", "answered_at", "pk")
            .values_list("study_item__instance_id", "study__slug", "participant__platform",
                         "participant__external_id", "answer", "is_correct"))
    cache: dict[tuple[str, str], str] = {}
    records = []
    for instance_id, study, platform, external_id, answer, correct in rows.iterator(chunk_size=2000):
        if (platform, external_id) not in cache:
            cache[(platform, external_id)] = pseudonym(platform=platform, external_id=external_id, salt=salt)
        stel_id, corpus = keys[instance_id]
        records.append((stel_id, corpus, study, cache[(platform, external_id)], answer, bool(correct)))
    order = {key: n for n, key in enumerate(zip(frame["corpus"], frame["id"], strict=True))}
    records.sort(key=lambda r: order[(r[1], r[0])])  # the instances' export order; stable within an instance
    votes = pd.DataFrame.from_records(records, columns=VOTES_COLUMNS)
    facts = {"published": bool(published), "rows": len(votes), "annotators": len(cache),
             "studies": [s.slug for s in published],
             "not_published": [s.slug for s in studies if not s.release_annotator_labels],
             "pseudonyms": "keyed HMAC-SHA256" + (", salted for this release" if salt else ""),
             "columns": VOTES_COLUMNS}
    return votes, facts


def votes_table(votes: pd.DataFrame) -> pa.Table:
    schema = pa.schema([(name, spec.arrow) for name, spec in VOTES_FIELDS.items()])
    return pa.Table.from_pandas(votes[VOTES_COLUMNS], schema=schema, preserve_index=False)


def votes_path(out: Path, *, fmt: str) -> Path:
    """Beside a file export (`<stem>.annotator_votes.<ext>`); in the hub folder its own config."""
    if fmt == "hub":
        return out / "data" / VOTES_TABLE / "train.parquet"
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.{VOTES_TABLE}.{'jsonl' if fmt == 'jsonl' else 'parquet'}")


def votes_write(path: Path, votes: pd.DataFrame, *, fmt: str) -> None:
    """The table as JSON lines (`fmt` jsonl) or zstd Parquet (parquet, hub), written atomically."""
    table = votes_table(votes)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in table.to_pylist())
        atomic_write(path, lambda tmp: tmp.write_text(lines, encoding="utf-8", newline="\n"))
    else:
        import pyarrow.parquet as pq  # heavy: the Parquet writer loads only for Parquet tables

        atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def votes_beside(ids_path: Path) -> Path | None:
    """The votes table an export wrote beside its file (JSONL or Parquet), if it is there."""
    for fmt in ("jsonl", "parquet"):
        path = votes_path(ids_path, fmt=fmt)
        if path.is_file():
            return path
    return None


def votes_read(path: Path) -> pd.DataFrame:
    """A votes table as an export wrote it; a file without the table's columns is refused."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # heavy: the Parquet reader loads only for Parquet tables

        records = pq.read_table(path).to_pylist()
    else:
        try:
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ApplicationError(f"{path}: invalid JSON ({exc.msg})", code=INVALID_FILE) from None
    missing = [name for name in VOTES_COLUMNS if records and name not in records[0]]
    if missing or not all(isinstance(r, dict) for r in records):
        raise ApplicationError(f"{path}: not an annotator votes table (missing {', '.join(missing) or 'columns'})",
                               code=INVALID_FILE)
    return pd.DataFrame.from_records(records, columns=VOTES_COLUMNS)
