"""Characteristic builders: make parallel corpora for characteristics that no published corpus covers.

`contraction_corpus_build` turns plain sentences into (expanded, contracted) pairs with the rules of
`tasks.services.contraction_rules` (STEL appendix C.1) and stores them with `corpus_store`, atomically.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from tasks.error_codes import NOTHING_TO_STORE
from tasks.models import Corpus
from tasks.services.contraction_rules import APOSTROPHES, RULES_VERSION, STEL_CONTRACTIONS, convert
from tasks.services.imports import PairRow, component_get, corpus_store, read_text

CONTRACTION_SOURCE = "STEL appendix C.1 contraction dictionary (Wegmann & Nguyen 2021, github.com/nlpsoc/STEL, MIT)"


def text_lines_read(*, path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file (BOM and line ends removed). Decoding is the importers' `read_text`, so a
    missing file or undecodable bytes give the same errors (naming file and line) as `import_corpus`."""
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    return [line.rstrip("\r") for line in lines]


@dataclass
class ContractionBuild:
    """What the builder did: the stored corpus and how every line of the input was counted."""

    corpus: Corpus | None
    n_lines: int
    converted: int
    skipped_ambiguous: int
    skipped_unlisted: int
    skipped_no_contraction: int
    skipped_blank: int
    skipped_no_apostrophe: int = 0
    skipped_has_contraction: int = 0
    require_apostrophe: bool = True
    both_directions: bool = False
    directions: dict[str, int] = field(default_factory=dict)
    skip_reasons: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus.name if self.corpus else None, "corpus_id": self.corpus.pk if self.corpus else None,
            "component": "contraction", "lines": self.n_lines, "converted": self.converted,
            "skipped_ambiguous": self.skipped_ambiguous, "skipped_unlisted": self.skipped_unlisted,
            "skipped_no_contraction": self.skipped_no_contraction, "skipped_blank": self.skipped_blank,
            "skipped_no_apostrophe": self.skipped_no_apostrophe,
            "skipped_has_contraction": self.skipped_has_contraction,
            "require_apostrophe": self.require_apostrophe, "both_directions": self.both_directions,
            "directions": self.directions, "skip_reasons": self.skip_reasons, "rules_version": RULES_VERSION,
        }


def contraction_corpus_build(
    *,
    name: str,
    path: str | Path,
    replace: bool = False,
    require_apostrophe: bool = True,
    both_directions: bool = False,
    progress: Callable[[int, int], None] | None = None,
    convert_progress: Callable[[int, int], None] | None = None,
) -> ContractionBuild:
    """Build and store corpus `name` of the `contraction` component from the sentences of `path` (one a line).

    As STEL built it (its ContractionQuadrupleGenerator): the source sentence is the expanded side and is only
    contracted, and it must already contain an apostrophe (a possessive, a quote), so that an apostrophe is on
    both sides and cannot tell them apart. `require_apostrophe=False` relaxes the second rule; `both_directions`
    also takes sentences that have contractions and expands them (their expanded side then has no contraction's
    apostrophe: check the corpus with `audit_instances`).

    Style 1 is the expanded sentence, style 2 the contracted one. A sentence with an ambiguous contraction
    (he'd before a determiner, 's before a participle, ain't), or one STEL's dictionary lacks (let's, might've),
    is skipped and counted rather than guessed, so every stored pair is clean. `convert_progress` is called
    every 1,000 lines while converting, `progress` while storing.
    """
    component = component_get(name="contraction")
    lines = text_lines_read(path=path)
    pairs: list[PairRow] = []
    skipped: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    directions: Counter[str] = Counter()
    for number, line in enumerate(lines, start=1):
        if convert_progress and (number % 1000 == 0 or number == len(lines)):
            convert_progress(number, len(lines))
        sentence = line.strip()
        if not sentence:
            skipped["blank"] += 1
            continue
        if require_apostrophe and not any(mark in sentence for mark in APOSTROPHES):
            skipped["no_apostrophe"] += 1
            continue
        result = convert(sentence)
        if not result.skip and not both_directions and result.direction != "contract":
            skipped["has_contraction"] += 1
            continue
        if result.skip:
            skipped[result.skip] += 1
            if result.reason:
                reasons[result.reason] += 1
            continue
        directions[result.direction] += 1
        pairs.append(PairRow(
            source_id=str(number), text_1=result.expanded, text_2=result.contracted,
            metadata={"line": number, "original": sentence, "direction": result.direction, "changes": result.changes},
        ))
    if not pairs:
        raise ApplicationError(
            f"{path}: no sentence could be converted ({len(lines)} lines; {dict(skipped)})", code=NOTHING_TO_STORE
        )
    corpus = corpus_store(
        name=name, component=component, import_format=Corpus.Format.BUILT, pairs=pairs,
        source=f"{Path(path).name}: sentences converted with the {CONTRACTION_SOURCE}",
        attribution="as the input sentences; the contraction dictionary is STEL's (MIT)",
        params={
            "builder": "contraction", "rules_version": RULES_VERSION, "file": str(path),
            "dictionary_entries": len(STEL_CONTRACTIONS), "skip_reasons": dict(reasons),
            "require_apostrophe": require_apostrophe, "both_directions": both_directions,
        },
        n_rows_read=len(lines), n_skipped=len(lines) - len(pairs), replace=replace, progress=progress,
    )
    return ContractionBuild(
        corpus=corpus, n_lines=len(lines), converted=len(pairs), skipped_ambiguous=skipped["ambiguous"],
        skipped_unlisted=skipped["unlisted"], skipped_no_contraction=skipped["no_contraction"],
        skipped_blank=skipped["blank"], skipped_no_apostrophe=skipped["no_apostrophe"],
        skipped_has_contraction=skipped["has_contraction"], require_apostrophe=require_apostrophe,
        both_directions=both_directions, directions=dict(directions), skip_reasons=dict(reasons),
    )
