"""Seeded percentile bootstrap over instances (rows of a per-instance table)."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# Cost control: each resample is one call of the library on a table as large as the group, so the number of
# resamples shrinks for very large groups (deterministically, from their size: resamples × rows ≤ the budget, never
# fewer than MIN_RESAMPLES) to keep a 200,000-instance study within seconds. Small studies get the full 1000.
# The count used is stored next to every interval.
DEFAULT_RESAMPLES = 1000
DEFAULT_ROW_BUDGET = 2_000_000
MIN_RESAMPLES = 50


def resamples_for(n_rows: int, *, requested: int = DEFAULT_RESAMPLES, row_budget: int = DEFAULT_ROW_BUDGET) -> int:
    if n_rows <= 0:
        return 0
    return max(min(requested, MIN_RESAMPLES), min(requested, math.ceil(row_budget / n_rows)))


def bootstrap_ci(
    *,
    table: np.ndarray,
    statistic: Callable[[np.ndarray], float | None],
    seed: int,
    resamples: int,
    on_step: Callable[[], None] | None = None,
) -> dict:
    """95% percentile interval of `statistic` over `resamples` resamples of the rows of `table`."""
    n = table.shape[0]
    if n < 2 or resamples <= 0:
        return {"low": None, "high": None, "resamples": 0}
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        value = statistic(table[rng.integers(0, n, n)])
        if value is not None:
            values.append(value)
        if on_step is not None:
            on_step()
    if not values:
        return {"low": None, "high": None, "resamples": resamples}
    low, high = np.percentile(np.asarray(values), [2.5, 97.5])
    return {"low": float(low), "high": float(high), "resamples": resamples}
