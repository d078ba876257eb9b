"""Fleiss' kappa through statsmodels.stats.inter_rater, on the first k responses of complete items.

The categories are the answers given (the order chosen, S1-S2 / S2-S1, for ordering tasks), as STEL computed
it — not correct/incorrect.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa


def fleiss_table(*, first_k: pd.DataFrame, complete_item_ids: np.ndarray, k: int) -> tuple[np.ndarray, list[str]]:
    """The subjects × categories count table (statsmodels' aggregate_raters on the items × k answer codes)."""
    used = first_k[first_k["item_id"].isin(complete_item_ids)]
    if used.empty:
        return np.zeros((0, 0), dtype=np.int64), []
    categories = sorted(used["answer"].unique().tolist())
    codes = pd.Categorical(used["answer"], categories=categories).codes
    # Rows of `used` are sorted by item then rank, each complete item has exactly k of them.
    matrix = codes.reshape(-1, k)
    table, _ = aggregate_raters(matrix, n_cat=len(categories))
    return table, categories


def fleiss_kappa_of(table: np.ndarray) -> float | None:
    """statsmodels' Fleiss' kappa; None when undefined (no items, or one category only)."""
    if table.shape[0] == 0 or table.shape[1] < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):  # one category only: kappa is undefined (NaN)
        value = float(fleiss_kappa(table, method="fleiss"))
    return None if np.isnan(value) else value
