"""Surface metrics: BLEU and chrF (sacrebleu), Levenshtein and Jaro-Winkler similarity (rapidfuzz).

Each is computed against the source (`<name>_src`, Babakov et al.'s usual setting) and, for items that carry one,
against the reference (`<name>_ref`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler, Levenshtein

from .base import Metric, MetricItem, Progress, Scores, has_reference, reference_column, register


class _SacrebleuMetric(Metric):
    def make(self) -> Any:
        raise NotImplementedError

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        scorer = self.make()
        src = [scorer.sentence_score(item.rewrite, [item.source]).score for item in items]
        scores: Scores = {f"{self.name}_src": src}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items, lambda idx: [scorer.sentence_score(items[i].rewrite, [items[i].reference]).score for i in idx]
            )
        if progress:
            progress(len(items))
        return scores


@register
class BleuMetric(_SacrebleuMetric):
    name = "bleu"
    description = "sentence BLEU (sacrebleu, effective order) of the rewrite against source / reference, 0-100"

    def make(self) -> Any:
        from sacrebleu.metrics import BLEU  # heavy: sacrebleu loads only when the metric runs

        # effective_order: sentence-level BLEU without it is 0 whenever a 4-gram order has no match.
        return BLEU(effective_order=True)


@register
class ChrfMetric(_SacrebleuMetric):
    name = "chrf"
    description = "sentence chrF (sacrebleu defaults: char 6-grams, beta 2) against source / reference, 0-100"

    def make(self) -> Any:
        from sacrebleu.metrics import CHRF  # heavy: sacrebleu loads only when the metric runs

        return CHRF()


class _RapidfuzzMetric(Metric):
    scorer: Any

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # cpdist compares element i with element i in C++, no Python loop per pair; float64 so values equal
        # the scorer's own (cpdist defaults to float32).
        src = process.cpdist(
            [i.rewrite for i in items], [i.source for i in items], scorer=self.scorer, dtype=np.float64
        )
        scores: Scores = {f"{self.name}_src": [float(v) for v in src]}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items,
                lambda idx: [float(v) for v in process.cpdist(
                    [items[i].rewrite for i in idx], [items[i].reference for i in idx], scorer=self.scorer,
                    dtype=np.float64,
                )],
            )
        if progress:
            progress(len(items))
        return scores


@register
class LevenshteinMetric(_RapidfuzzMetric):
    name = "levenshtein"
    description = "normalized Levenshtein similarity (rapidfuzz), 0-1"
    scorer = staticmethod(Levenshtein.normalized_similarity)


@register
class JaroWinklerMetric(_RapidfuzzMetric):
    name = "jaro_winkler"
    description = "Jaro-Winkler similarity (rapidfuzz), 0-1"
    scorer = staticmethod(JaroWinkler.normalized_similarity)
