"""Correlating metric scores with human ratings: item level (overall, per style) and system level."""
from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np


def spearman(metric: Sequence[float | None], human: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho and its two-sided p-value (scipy) over the pairs where the metric has a value."""
    pairs = [(m, h) for m, h in zip(metric, human, strict=True) if m is not None and math.isfinite(m)]
    n = len(pairs)
    if n < 3:
        return {"rho": None, "p": None, "n": n, "note": "fewer than 3 scored items"}
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"rho": None, "p": None, "n": n, "note": "constant " + ("metric" if np.ptp(x) == 0 else "ratings")}
    from scipy.stats import spearmanr  # scipy.stats costs every process half a second: load it when used

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = spearmanr(x, y)
    rho, p = float(result.statistic), float(result.pvalue)
    return {"rho": rho, "p": p if math.isfinite(p) else None, "n": n}


def by_group(
    metric: Sequence[float | None], human: Sequence[float], groups: Sequence[str]
) -> dict[str, dict[str, Any]]:
    members: dict[str, list[int]] = defaultdict(list)
    for index, group in enumerate(groups):
        members[group].append(index)
    return {
        group: spearman([metric[i] for i in idx], [human[i] for i in idx]) for group, idx in sorted(members.items())
    }


def system_level(metric: Sequence[float | None], human: Sequence[float], systems: Sequence[str]) -> dict[str, Any]:
    """Babakov et al. (2022), Table 4: correlate per-system means and check the metric ranks the human-best
    system first. Only items the metric scored count, for the human means too, so both see the same items."""
    members: dict[str, list[int]] = defaultdict(list)
    for index, system in enumerate(systems):
        if system and metric[index] is not None and math.isfinite(metric[index]):
            members[system].append(index)
    if len(members) < 2:
        return {"n_systems": len(members), "note": "fewer than 2 systems"}
    means = {
        system: {
            "human": float(np.mean([human[i] for i in idx])),
            "metric": float(np.mean([metric[i] for i in idx])),
            "n": len(idx),
        }
        for system, idx in sorted(members.items())
    }
    best_human = max(v["human"] for v in means.values())
    best_metric = max(v["metric"] for v in means.values())
    human_best = [s for s, v in means.items() if math.isclose(v["human"], best_human, rel_tol=0, abs_tol=1e-12)]
    metric_best = [s for s, v in means.items() if math.isclose(v["metric"], best_metric, rel_tol=0, abs_tol=1e-12)]
    names = list(means)
    correlation = (
        spearman([means[s]["metric"] for s in names], [means[s]["human"] for s in names])
        if len(names) >= 3 else {"rho": None, "p": None, "n": len(names), "note": "fewer than 3 systems"}
    )
    return {
        "n_systems": len(names),
        "rho": correlation["rho"], "p": correlation["p"], **({"note": correlation["note"]} if "note" in correlation
                                                             else {}),
        "human_best": human_best,
        "metric_best": metric_best,
        # A metric tied at the top with the human-best system does not pick it unambiguously.
        "picks_best": len(metric_best) == 1 and metric_best[0] in human_best,
        "means": means,
    }
