"""Accuracy per component and overall, share undecided (STEL Table 7), and McNemar's test between methods."""
from __future__ import annotations

from typing import Any

import numpy as np

from .decision import UNDECIDED, accuracy_stel, accuracy_with_undecided


def accuracy_table(predictions: np.ndarray, correct: np.ndarray, components: np.ndarray) -> dict[str, Any]:
    """{"overall": {...}, "components": {name: {...}}} with accuracy, accuracy on decided, share undecided, n.

    `accuracy_stel` is what STEL's code reports; it differs from `accuracy` only where ties are at least as many
    as decisions (STEL then reports 0.5), and `stel_quirk` says so."""

    def cell(mask: np.ndarray) -> dict[str, Any]:
        chosen, gold = predictions[mask], correct[mask]
        decided = chosen != UNDECIDED
        accuracy, stel = accuracy_with_undecided(chosen, gold), accuracy_stel(chosen, gold)
        return {
            "n": int(mask.sum()),
            "accuracy": accuracy,
            "accuracy_stel": stel,
            "stel_quirk": bool(len(chosen)) and stel != accuracy,
            "accuracy_decided": float(np.mean(chosen[decided] == gold[decided])) if decided.any() else None,
            "undecided_share": float(np.mean(~decided)) if len(chosen) else None,
            "undecided": int((~decided).sum()),
        }

    return {
        "overall": cell(np.ones(len(predictions), dtype=bool)),
        "components": {name: cell(components == name) for name in sorted(set(components.tolist()))},
    }


def mcnemar_compare(right_1: np.ndarray, right_2: np.ndarray) -> dict[str, Any]:
    """McNemar's test on two methods' right/wrong answers to the same instances (statsmodels).

    The exact binomial version when the discordant pairs are fewer than 25, the χ² version with continuity
    correction otherwise (the usual rule of thumb)."""
    both = int(np.sum(right_1 & right_2))
    only_1 = int(np.sum(right_1 & ~right_2))
    only_2 = int(np.sum(~right_1 & right_2))
    neither = int(np.sum(~right_1 & ~right_2))
    table = [[both, only_1], [only_2, neither]]
    exact = (only_1 + only_2) < 25
    from statsmodels.stats.contingency_tables import mcnemar  # loads scipy.stats: only when compared

    result = mcnemar(np.array(table), exact=exact, correction=True)
    return {"table": table, "statistic": float(result.statistic), "pvalue": float(result.pvalue), "exact": exact}
