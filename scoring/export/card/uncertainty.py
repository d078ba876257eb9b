"""The card's "Per-item uncertainty" section: how likely each gold label is right (`p_correct`, from
`scoring.agreement.uncertainty`), as a histogram, the expected number of wrong gold labels (Σ 1 − p) and the model
each figure comes from, overall and per component."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scoring.agreement.uncertainty import LEVEL, expected_wrong
from scoring.export.card.context import CardContext

EDGES = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def _histogram(values: np.ndarray) -> dict[str, int]:
    """Items per band of p_correct; the last band holds 1.0."""
    bands = np.clip(np.searchsorted(EDGES, values, side="right") - 1, 0, len(EDGES) - 2)
    counts = np.bincount(bands, minlength=len(EDGES) - 1)
    labels = [f"{EDGES[i]:.2f}–{EDGES[i + 1]:.2f}" for i in range(len(EDGES) - 1)]
    return {label: int(n) for label, n in zip(labels, counts, strict=True)}


def _group(frame: pd.DataFrame) -> dict[str, Any]:
    values = frame["p_correct"].dropna().to_numpy(dtype=float)
    return {"items": int(len(frame)), "with_uncertainty": int(len(values)),
            "expected_wrong_gold_labels": expected_wrong(values),
            "p_correct_mean": round(float(values.mean()), 4) if len(values) else None,
            "histogram": _histogram(values)}


def uncertainty_facts(ctx: CardContext) -> dict[str, Any]:
    frame = ctx.frame
    if "p_correct" not in frame:
        return {"available": False}
    frame = frame.assign(p_correct=pd.to_numeric(frame["p_correct"], errors="coerce"))
    models = sorted({m for m in frame["uncertainty_model"] if m})
    return {
        "available": bool(frame["p_correct"].notna().any()),
        "columns": ["p_correct", "p_correct_low", "p_correct_high", "uncertainty_model"],
        "level": LEVEL,
        "models": models,
        "meaning": "p_correct is the posterior probability that an instance's correct alternative is the answer "
                   "careful annotators give; [p_correct_low, p_correct_high] the central "
                   f"{LEVEL:.0%} interval of the estimated model's own uncertainty. The one-coin Dawid-Skene model "
                   "is fitted by EM over a study's annotators (with item difficulty classes where the study's "
                   "uncertainty_model setting asks for them, or, set to auto, where a likelihood-ratio test finds the "
                   "answers overdispersed against it); count-only votes (no annotator identity, such as "
                   "STEL's published votes) use the pooled one-coin model, every vote right with one shared "
                   "probability. Calibration and coverage are measured on simulated crowds "
                   "(docs/benchmarks.md, benchmarks/item_uncertainty.py).",
        "model_choice": list(ctx.frame.attrs.get("uncertainty_choices") or []),
        "overall": _group(frame),
        "per_component": {str(name): _group(group) for name, group in frame.groupby("style_type", sort=True)},
    }


def uncertainty_markdown(facts: dict[str, Any]) -> list[str]:
    if not facts.get("available"):
        return ["No instance has votes, so there is no per-item uncertainty."]
    overall = facts["overall"]
    lines = [facts["meaning"], "",
             f"Models: {', '.join(facts['models'])}.", "",
             *_choice_lines(facts.get("model_choice") or []),
             f"**Expected wrong gold labels: {overall['expected_wrong_gold_labels']:.1f}** of "
             f"{overall['with_uncertainty']} instances with votes (the sum of 1 − p_correct).", "",
             "| component | instances with votes | expected wrong gold labels | mean p_correct |",
             "|---|---|---|---|"]
    for name, group in facts["per_component"].items():
        mean = "—" if group["p_correct_mean"] is None else f"{group['p_correct_mean']:.3f}"
        lines.append(f"| {name} | {group['with_uncertainty']} | {group['expected_wrong_gold_labels']:.1f} | {mean} |")
    lines += ["", "Histogram of p_correct (instances per band):", "", "```"]
    most = max(overall["histogram"].values()) or 1
    for band, n in overall["histogram"].items():
        lines.append(f"{band}  {'#' * round(40 * n / most):<40}  {n}")
    lines.append("```")
    return lines


def _choice_lines(choices: list[dict[str, Any]]) -> list[str]:
    """Per study: the model its p_correct comes from and why (its uncertainty_model setting, or auto's test)."""
    if not choices:
        return []
    return ["| study | uncertainty_model setting | model used | why |", "|---|---|---|---|",
            *[f"| {c['study']} | {c['setting']} | {c['model']} | {c['reason']} |" for c in choices], ""]
