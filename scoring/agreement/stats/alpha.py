"""Krippendorff's alpha through the `krippendorff` package, from long-format responses.

The package's conventions: reliability data is raters × units with NaN for missing values, `value_domain` must be
explicit (and ordered beyond nominal), and `value_counts` (units × values) is the fast input: we build it from the
long-format rows with one bincount instead of a raters × units matrix (whose size grows with raters × items).
"""
from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def value_counts_from_long(
    *, unit_codes: np.ndarray, value_codes: np.ndarray, n_units: int, n_values: int
) -> np.ndarray:
    """units × values count matrix from parallel arrays of unit index and value index (one entry per rating)."""
    flat = np.bincount(unit_codes * n_values + value_codes, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values)


def alpha_counts(
    *, answers: pd.Series, values: pd.Series, item_pos: np.ndarray, n_items: int, domain: list, numeric: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(value_counts for every item, value_domain): nominal answers in the domain's order (answers outside it
    appended, sorted), numeric ratings on the ordered union of the scale and the values given."""
    if numeric:
        observed = values.to_numpy(dtype="float64")
        keep = ~np.isnan(observed)
        value_domain = np.union1d(np.asarray(domain, dtype="float64"), observed[keep])
        codes = np.searchsorted(value_domain, observed[keep])
    else:
        uniques = pd.unique(answers)
        extra = sorted(set(map(str, uniques)) - set(map(str, domain)))
        value_domain = np.asarray([str(d) for d in domain] + extra, dtype=object)
        codes = pd.Index(value_domain).get_indexer(answers)
        keep = codes >= 0
        codes = codes[keep]
    counts = value_counts_from_long(unit_codes=item_pos[keep], value_codes=codes, n_units=n_items,
                                    n_values=len(value_domain))
    return counts, value_domain


def krippendorff_alpha_of(*, value_counts: np.ndarray, value_domain: np.ndarray, level: str) -> float | None:
    """The package's alpha; None when undefined (no pairable unit, or a single value used: the package then
    divides 0 by 0, so the NaN is the check — no extra pass over the table in the bootstrap's hot loop)."""
    if value_counts.shape[0] == 0:
        return None
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(krippendorff.alpha(value_counts=value_counts, value_domain=value_domain,
                                             level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None
    return None if np.isnan(value) or np.isinf(value) else value
