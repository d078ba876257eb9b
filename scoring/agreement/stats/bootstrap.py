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


def distinct_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows, how often each occurs) of a non-negative integer table. Rows are packed into one int64 key
    (base = largest count + 1) and the keys uniqued: ~6× faster than np.unique(axis=0), which sorts row views."""
    table = np.asarray(table)
    n_columns = table.shape[1]
    base = int(table.max()) + 1 if table.size else 1
    if table.dtype.kind not in "iu" or n_columns == 0 or n_columns * np.log2(max(base, 2)) > 62:
        rows, counts = np.unique(table, axis=0, return_counts=True)
        return rows, counts
    keys = table.astype(np.int64) @ (base ** np.arange(n_columns, dtype=np.int64))
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return table[first], counts


def bootstrap_ci(
    *,
    table: np.ndarray,
    statistic: Callable[[np.ndarray], float | None],
    seed: int,
    resamples: int,
    on_step: Callable[[], None] | None = None,
) -> dict:
    """95% percentile interval of `statistic` over `resamples` resamples (with replacement) of the rows of `table`.

    Rows are instances; many share the same counts (with k = 5 and two answers there are six patterns), and both
    statistics ignore row order. So a resample is drawn as multinomial counts over the distinct rows — the same
    distribution as drawing n row indices with replacement — and laid out with np.repeat, which is much cheaper
    than fancy-indexing n random rows. The statistic itself is always the library's, on the full resampled table.
    """
    n = table.shape[0]
    if n < 2 or resamples <= 0:
        return {"low": None, "high": None, "resamples": 0}
    patterns, frequency = distinct_rows(table)
    share = frequency / n
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        value = statistic(np.repeat(patterns, rng.multinomial(n, share), axis=0))
        if value is not None:
            values.append(value)
        if on_step is not None:
            on_step()
    if not values:
        return {"low": None, "high": None, "resamples": resamples}
    low, high = np.percentile(np.asarray(values), [2.5, 97.5])
    return {"low": float(low), "high": float(high), "resamples": resamples}
