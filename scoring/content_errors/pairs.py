"""(source, good rewrite) pairs from a CSV/TSV/JSONL file or from a stored corpus; no writes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.error_codes import INVALID_SIDE
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from scoring.error_codes import EMPTY_CORPUS
from tasks.error_codes import DUPLICATE_ID, EMPTY_FILE, EMPTY_TEXT
from tasks.models import Corpus, ParallelPair
from tasks.services.imports import read_text
from tasks.services.parsers import records_read


@dataclass(frozen=True)
class RewritePair:
    pair_id: str
    source: str
    rewrite: str
    target_style: str = ""


def pairs_read(*, path: str | Path) -> list[RewritePair]:
    """Columns `id, source, rewrite` (and optional `target_style`); every bad line is named."""
    path = Path(path)
    text = read_text(path)
    records = records_read(
        path, text, required=("source", "rewrite") if path.suffix.lower() in {".csv", ".tsv", ".tab"} else (),
        unknown_type=f"{path}: pairs are read from .csv, .tsv or .jsonl files, not '{path.suffix.lower()}'",
    )
    pairs: list[RewritePair] = []
    seen: dict[str, int] = {}
    for number, record in records:
        source, rewrite = (str(record.get(key) or "").strip() for key in ("source", "rewrite"))
        if not source or not rewrite:
            raise ApplicationError(f"{path}, line {number}: empty or missing {'source' if not source else 'rewrite'}",
                                   code=EMPTY_TEXT)
        pair_id = str(record.get("id") or "").strip() or str(number)
        if pair_id in seen:
            raise ApplicationError(f"{path}, line {number}: duplicate id {pair_id!r} (also line {seen[pair_id]})",
                                   code=DUPLICATE_ID)
        seen[pair_id] = number
        pairs.append(RewritePair(pair_id, source, rewrite, str(record.get("target_style") or "").strip()))
    if not pairs:
        raise ApplicationError(f"{path}: no pairs", code=EMPTY_FILE)
    return pairs


def corpus_language(*, name: str) -> str:
    """The BCP 47 language of the corpus named `name` (English when it has none or does not exist: the read of its
    pairs names that error)."""
    return Corpus.objects.filter(name=name).values_list("language", flat=True).first() or "en"


def pairs_from_corpus(*, name: str, source_side: int = 1) -> list[RewritePair]:
    """The corpus's pairs with side `source_side` as the source and the other side as the good rewrite."""
    if source_side not in (1, 2):
        raise ApplicationError("Source side must be 1 or 2", code=INVALID_SIDE, field="source_side")
    corpus = Corpus.objects.filter(name=name).select_related("component").first()
    if corpus is None:
        raise ApplicationError(f"corpus {name!r} not found", code=NOT_FOUND, status=404)
    style = corpus.component.label_2 if source_side == 1 else corpus.component.label_1
    rows = ParallelPair.objects.filter(corpus=corpus).order_by("position").values_list("source_id", "text_1", "text_2")
    pairs = [RewritePair(sid, t1, t2, style) if source_side == 1 else RewritePair(sid, t2, t1, style)
             for sid, t1, t2 in rows]
    if not pairs:
        raise ApplicationError(f"corpus {name!r} has no pairs", code=EMPTY_CORPUS)
    return pairs
