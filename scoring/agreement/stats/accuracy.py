"""Majority accuracy: the share of complete instances whose majority (at least m of k) is correct."""
from __future__ import annotations

import pandas as pd


def majority_accuracy(per_item: pd.DataFrame) -> float | None:
    scored = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
    if scored.empty:
        return None
    return float(scored["majority_correct"].mean())


def votes_distribution(per_item: pd.DataFrame, *, k: int) -> dict[str, int]:
    """How many complete instances got 0, 1, …, k correct votes (STEL's `# Votes out of 5`)."""
    scored = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
    counts = scored["n_correct"].value_counts()
    return {str(v): int(counts.get(v, 0)) for v in range(k + 1)}
