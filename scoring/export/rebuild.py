"""benchmark_rebuild: the texts of an ids-only export put back from one's own copy of the corpora.

The ids-only form names, per instance, the corpus pairs its texts came from (source ids) and their styles, or for
instances imported from a STEL file, the instance id. After importing one's copy of each corpus the way the card's
recipe says, every row's texts are read from it and checked against the row's `text_sha256`; a row whose texts are
missing or differ is an error naming it, and nothing is written.

Where the export wrote a per-annotator votes table beside the ids-only file, the rebuild writes it beside its own
output the way the export does (JSONL or Parquet by the format; none beside STEL's TSV), row for row: the same
pseudonyms, keyed with the export's salt, which the rebuild never needs. A card beside the ids-only file that names a
votes table that is not there is an error before anything is written.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from core.errors import ApplicationError
from scoring.error_codes import (
    FILE_MISSING,
    INVALID_FILE,
    INVALID_FORMAT,
    INVALID_OUT,
    REBUILD_MISMATCH,
    UNKNOWN_CORPUS,
)
from scoring.export.annotator_votes import VOTES_FORMATS, votes_beside, votes_path, votes_read, votes_write
from scoring.export.formats import (
    EXPORT_FORMATS,
    FILE_FORMATS,
    IDS_FIELDS,
    UNCERTAINTY_COLUMNS,
    card_paths,
    text_digest,
)
from tasks.models import Corpus, ParallelPair, Setup, TaskInstance

SHOWN = 5  # rows named in an error message


def ids_rows_read(path: Path) -> list[dict[str, Any]]:
    """The rows of an ids-only JSONL or Parquet file (an export's `ids_only` form)."""
    if not path.is_file():
        raise ApplicationError(f"{path}: file not found", code=FILE_MISSING, status=404)
    if path.suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
    else:
        rows = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ApplicationError(f"{path}: line {number}: invalid JSON ({exc.msg})") from None
    missing = [name for name in IDS_FIELDS if rows and name not in rows[0]]
    if not rows or missing:
        raise ApplicationError(f"{path}: not an ids-only export (missing {', '.join(missing) or 'rows'})",
                               code=INVALID_FILE)
    return rows


def _texts_from_pairs(row: dict[str, Any], pairs: dict[str, ParallelPair]) -> tuple[str, str, str, str] | None:
    anchor, other = pairs.get(row["anchor_pair"]), pairs.get(row["sentence_pair"])
    if anchor is None or other is None:
        return None
    a1, s1 = int(row["anchor_1_style"]), int(row["sentence_1_style"])

    def text(pair: ParallelPair, style: int) -> str:
        return pair.text_1 if style == 1 else pair.text_2

    if row["setup"] == Setup.STYLE_OR_CONTENT:
        # S1 is the same-style sentence of the other pair, or A1's own paraphrase (generation.py, style-or-content)
        same_style, paraphrase = text(other, a1), text(anchor, 3 - a1)
        first, second = (same_style, paraphrase) if s1 == a1 else (paraphrase, same_style)
        return text(anchor, a1), "", first, second
    a2 = text(anchor, 3 - a1) if row["setup"] == Setup.QUADRUPLE else ""
    return text(anchor, a1), a2, text(other, s1), text(other, 3 - s1)


def _votes_source(ids_path: Path, rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The export's votes table beside the ids-only file (checked against its rows), or None where it wrote none."""
    source = votes_beside(ids_path)
    if source is None:
        card = card_paths(ids_path)[0]
        named = {}
        if card.is_file():
            try:
                named = json.loads(card.read_text(encoding="utf-8")).get("annotators", {}).get("annotator_votes", {})
            except (json.JSONDecodeError, AttributeError):
                named = {}
        if isinstance(named, dict) and named.get("published") and named.get("file"):
            raise ApplicationError(f"{ids_path.parent / named['file']}: the export's per-annotator votes table (named "
                                   f"by {card.name}) is not beside the ids-only file; put it back to rebuild it",
                                   code=FILE_MISSING, status=404)
        return None
    votes = votes_read(source)
    known = {(row["corpus"], row["id"]) for row in rows}
    strangers = sorted({f"{c}/{i}" for c, i in zip(votes["corpus"], votes["id"], strict=True)
                        if (c, i) not in known})
    if strangers:
        raise ApplicationError(f"{source}: votes on instances the ids-only file does not hold (e.g. "
                               f"{', '.join(strangers[:SHOWN])}): the table of another export", code=INVALID_FILE)
    return votes


def benchmark_rebuild(*, ids_path: Path, out: Path, fmt: str = "stel-tsv",
                      corpus_map: dict[str, str] | None = None) -> dict[str, Any]:
    """Write the full benchmark (`fmt`: one of FILE_FORMATS) from an ids-only file and the corpora here."""
    spec = EXPORT_FORMATS.get(fmt)
    if spec is None or spec.folder:
        raise ApplicationError(f"Format must be {', '.join(FILE_FORMATS[:-1])} or {FILE_FORMATS[-1]}, not '{fmt}'",
                               code=INVALID_FORMAT, field="format")
    out = Path(out).resolve()
    if out.is_dir():
        raise ApplicationError(f"Out: {out} is a directory; give a file name", code=INVALID_OUT, field="out")
    rows = ids_rows_read(Path(ids_path))
    votes = _votes_source(Path(ids_path).resolve(), rows)
    corpus_map = corpus_map or {}
    names = sorted({corpus_map.get(r["corpus"], r["corpus"]) for r in rows})
    corpora = {c.name: c for c in Corpus.objects.filter(name__in=names)}
    absent = [name for name in names if name not in corpora]
    if absent:
        raise ApplicationError(
            f"Corpus: {', '.join(absent)} not imported here; import your copy as the card's recipe says (or map "
            "the name: OLD=NEW)", code=UNKNOWN_CORPUS, field="corpus_map")
    pairs = {name: {p.source_id: p for p in ParallelPair.objects.filter(corpus=corpus)}
             for name, corpus in corpora.items()}
    stel_ids = {name: {i.stel_id: i for i in TaskInstance.objects.filter(corpus=corpus)}
                for name, corpus in corpora.items()}
    records, missing, differ = [], [], []
    for row in rows:
        name = corpus_map.get(row["corpus"], row["corpus"])
        if row.get("anchor_pair") and row.get("sentence_pair"):
            texts = _texts_from_pairs(row, pairs[name])
        else:
            instance = stel_ids[name].get(row["id"])
            texts = None if instance is None else (instance.anchor_1, instance.anchor_2, instance.sentence_1,
                                                   instance.sentence_2)
        if texts is None:
            missing.append(row["id"])
            continue
        if text_digest(*texts) != row["text_sha256"]:
            differ.append(row["id"])
            continue
        records.append({"anchor_1": texts[0], "anchor_2": texts[1], "alternative_1_1": texts[2],
                        "alternative_1_2": texts[3], "correct_alternative": int(row["correct_alternative"]),
                        "id": row["id"], "votes": -1 if row["votes"] is None else int(row["votes"]),
                        "style_type": row["style_type"], "setup": row["setup"],
                        **{name: row.get(name) for name in UNCERTAINTY_COLUMNS},
                        "uncertainty_model": row.get("uncertainty_model") or ""})
    if missing or differ:
        parts = []
        if missing:
            parts.append(f"{len(missing)} row(s) whose pairs or instances are not in your corpora (e.g. "
                         f"{', '.join(missing[:SHOWN])})")
        if differ:
            parts.append(f"{len(differ)} row(s) whose rebuilt texts differ from the exported ones (text_sha256; e.g. "
                         f"{', '.join(differ[:SHOWN])}): a different version of the corpus, or imported with other "
                         "options than the recipe's")
        raise ApplicationError("Nothing written: " + "; ".join(parts), code=REBUILD_MISMATCH,
                               details={"missing": missing[:100], "differ": differ[:100]})
    frame = pd.DataFrame.from_records(records)
    frame["votes_text"] = ["" if v < 0 else str(v) for v in frame["votes"]]
    out.parent.mkdir(parents=True, exist_ok=True)
    spec.write(frame, out, False)
    return {"rows": len(frame), "path": str(out), "format": fmt, "corpora": names,
            **_votes_rebuilt(votes, out=out, fmt=fmt)}


def _votes_rebuilt(votes: pd.DataFrame | None, *, out: Path, fmt: str) -> dict[str, Any]:
    """The export's votes table beside the rebuilt file, as the export writes it; what the summary says of it."""
    if votes is None:
        return {"annotator_votes": None}
    if fmt not in VOTES_FORMATS:
        return {"annotator_votes": None, "annotator_votes_note": f"the export's votes table ({len(votes)} rows) is "
                f"not written beside {EXPORT_FORMATS[fmt].label}, which holds the instances only"}
    path = votes_path(out, fmt=fmt)
    votes_write(path, votes, fmt=fmt)
    return {"annotator_votes": {"path": str(path), "rows": len(votes),
                                "annotators": int(votes["annotator"].nunique())}}
