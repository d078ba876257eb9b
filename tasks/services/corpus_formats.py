"""The corpus formats `import_corpus` reads, in one registry: a format is added here (and its parser in
`tasks.services.parsers`); the command line, the API serializer, the admin's import form, the upload service and the
import service all take their list and their per-format rules from it.

A format's rows are either pairs (parsed, then screened by STEL's pair test: `aligned`, `pairs`), pairs drawn from
several references per source (`turkcorpus`, seeded), or finished task instances (`stel`, STEL's own TSV)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from tasks.error_codes import UNKNOWN_FORMAT
from tasks.licences import STEL_ATTRIBUTION, STEL_LICENCE, TURKCORPUS_ATTRIBUTION, TURKCORPUS_LICENCE
from tasks.services.parsers import PairRow, parse_aligned, parse_pairs

PairParser = Callable[[Sequence[str | Path]], tuple[list[PairRow], dict[str, Any]]]


@dataclass(frozen=True)
class CorpusFormat:
    name: str
    label: str
    files_by_role: bool = False  # two files named by role (style 1, style 2), never by upload order
    detokenize: bool = False  # texts tokenized as published: normalized unless --no-detokenize
    rows: str = "pairs"  # "pairs" (parse_pairs: PairParser), "drawn" (TurkCorpus) or "instances" (STEL)
    parse_pairs: PairParser | None = None
    licence: tuple[str, str] | None = None  # (SPDX id, attribution) recorded when the researcher names none


CORPUS_FORMATS: dict[str, CorpusFormat] = {spec.name: spec for spec in (
    CorpusFormat("aligned", "aligned text files", files_by_role=True, parse_pairs=parse_aligned),
    CorpusFormat("turkcorpus", "TurkCorpus organized TSV", detokenize=True, rows="drawn",
                 licence=(TURKCORPUS_LICENCE, TURKCORPUS_ATTRIBUTION)),
    CorpusFormat("pairs", "CSV/TSV/JSONL pairs", parse_pairs=parse_pairs),
    CorpusFormat("stel", "STEL TSV export", rows="instances", licence=(STEL_LICENCE, STEL_ATTRIBUTION)),
)}
FORMATS = tuple(CORPUS_FORMATS)


def corpus_format_get(name: str) -> CorpusFormat:
    spec = CORPUS_FORMATS.get(name)
    if spec is None:
        raise ApplicationError(f"unknown format {name!r} (one of: {', '.join(FORMATS)})", code=UNKNOWN_FORMAT)
    return spec
