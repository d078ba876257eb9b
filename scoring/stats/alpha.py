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


def alpha_inputs(
    *, first_k: pd.DataFrame, level: str, domain: list, numeric: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(value_counts, value_domain) for the package: one row per item that has at least one counted rating."""
    if first_k.empty:
        return np.zeros((0, len(domain)), dtype=np.int64), np.asarray(domain)
    unit_codes, _ = pd.factorize(first_k["item_id"], sort=True)
    if numeric:
        observed = first_k["value"].to_numpy(dtype="float64")
        value_domain = np.asarray(sorted(set(float(v) for v in domain) | set(np.unique(observed[~np.isnan(observed)]))))
        value_codes = np.searchsorted(value_domain, observed)
        keep = ~np.isnan(observed)
    else:
        answers = first_k["answer"].to_numpy(dtype=object)
        extra = sorted(set(np.unique(answers)) - set(domain))
        value_domain = np.asarray(list(domain) + extra, dtype=object)
        value_codes = pd.Categorical(answers, categories=list(value_domain)).codes
        keep = value_codes >= 0
    counts = value_counts_from_long(
        unit_codes=unit_codes[keep], value_codes=np.asarray(value_codes)[keep],
        n_units=int(unit_codes.max()) + 1, n_values=len(value_domain),
    )
    return counts, value_domain


def krippendorff_alpha_of(*, value_counts: np.ndarray, value_domain: np.ndarray, level: str) -> float | None:
    """The package's alpha; None when undefined (fewer than two pairable values, or a single value used)."""
    pairable = value_counts[value_counts.sum(axis=1) >= 2]
    if pairable.shape[0] == 0 or (pairable.sum(axis=0) > 0).sum() < 2:
        return None
    # Only units with two or more ratings are pairable; the package drops the others itself, we pass fewer rows.
    value = float(krippendorff.alpha(value_counts=pairable, value_domain=value_domain, level_of_measurement=level))
    return None if np.isnan(value) else value
