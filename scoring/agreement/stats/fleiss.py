"""Fleiss' kappa through statsmodels.stats.inter_rater, on the first k responses of complete items.

The categories are the answers given (the order chosen, S1-S2 / S2-S1, for ordering tasks), as STEL computed
it — not correct/incorrect. The subjects × categories table is what statsmodels' `aggregate_raters` makes from an
items × raters matrix of answer codes; we build the same table with one bincount over all items at once and
take each group's rows (see `fleiss_table_from_codes` for the aggregate_raters route, used on small inputs).
"""
from __future__ import annotations

import numpy as np


def fleiss_table(*, counts: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The group's table: complete items' rows, only the categories given in the group (column indices)."""
    table = counts[rows]
    used = np.flatnonzero(table.sum(axis=0) > 0)
    return table[:, used], used


def fleiss_table_from_codes(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """statsmodels' own route: items × raters category codes → subjects × categories counts."""
    from statsmodels.stats.inter_rater import aggregate_raters  # statsmodels loads scipy.stats: only when used

    table, _ = aggregate_raters(codes, n_cat=n_categories)
    return table


def fleiss_kappa_of(table: np.ndarray) -> float | None:
    """statsmodels' Fleiss' kappa; None when undefined (no items, or one category only)."""
    if table.shape[0] == 0 or table.shape[1] < 2:
        return None
    # heavy: statsmodels loads only when the statistic is computed
    from statsmodels.stats.inter_rater import fleiss_kappa

    with np.errstate(divide="ignore", invalid="ignore"):  # one category only: kappa is undefined (NaN)
        value = float(fleiss_kappa(table, method="fleiss"))
    return None if np.isnan(value) else value
