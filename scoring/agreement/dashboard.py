"""Researcher dashboard plots, rendered on the server with matplotlib (SVG for the page, PNG for download).

Every plot is drawn from a stored AgreementRun result, so the page never recomputes statistics.
"""
from __future__ import annotations

import io
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from core.errors import ApplicationError
from core.file_cache import cached_bytes
from scoring.error_codes import INVALID_FORMAT, UNKNOWN_PLOT

Figure = Any


def _pyplot() -> Any:
    """matplotlib, imported when a plot is drawn (not when the admin loads), without a display."""
    # heavy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # heavy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    return plt


def _votes_per_component(result: dict[str, Any]) -> Figure:
    components = result.get("components") or {}
    k = int(result.get("k", 5))
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    names = [name for name, stats in components.items() if any(stats.get("votes_distribution", {}).values())]
    if not names:
        names, dists = ["all"], [result.get("votes_distribution", {})]
    else:
        dists = [components[name]["votes_distribution"] for name in names]
    width = 0.8 / max(1, len(names))
    x = np.arange(k + 1)
    for index, (name, dist) in enumerate(zip(names, dists, strict=True)):
        ax.bar(x + index * width - 0.4 + width / 2, [dist.get(str(v), 0) for v in x], width, label=name)
    ax.set_xticks(x)
    ax.set_xlabel(f"correct votes out of {k}")
    ax.set_ylabel("instances")
    ax.set_title("Distribution of correct votes per component")
    ax.legend(fontsize=8)
    return fig


def _accuracy_per_component(result: dict[str, Any]) -> Figure:
    components = result.get("components") or {}
    names = [n for n, s in components.items() if s.get("majority_accuracy") is not None] or []
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    if not names and result.get("majority_accuracy") is not None:
        names, values = ["all"], [result["majority_accuracy"]]
    else:
        values = [components[n]["majority_accuracy"] for n in names]
    ax.bar(names, values, color="#417690")
    for index, value in enumerate(values):
        ax.text(index, value + 0.01, f"{value:.2f}", ha="center", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"majority accuracy (≥ {result.get('min_correct')} of {result.get('k')})")
    ax.set_title("Accuracy per component")
    return fig


def _participant_accuracy(result: dict[str, Any]) -> Figure:
    values = [p["accuracy"] for p in result.get("participants", []) if p.get("accuracy") is not None]
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    ax.hist(values, bins=np.linspace(0, 1, 21), color="#79aec8", edgecolor="white")
    ax.set_xlabel("accuracy on instances")
    ax.set_ylabel("participants")
    ax.set_title(f"Participant accuracy ({len(values)} participants)")
    return fig


def _responses_over_time(result: dict[str, Any]) -> Figure:
    timeline = result.get("timeline") or []
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    if timeline:
        days = [row["day"] for row in timeline]
        ax.bar(days, [row["valid"] for row in timeline], label="valid", color="#417690")
        ax.bar(days, [row["invalid"] for row in timeline], bottom=[row["valid"] for row in timeline],
               label="excluded", color="#ba2121")
        ax.legend(fontsize=8)
        if len(days) > 10:
            ax.set_xticks(days[:: max(1, len(days) // 10)])
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    ax.set_ylabel("responses")
    ax.set_title("Responses over time (per day)")
    return fig


def _models_by_vote_share(result: dict[str, Any]) -> Figure:
    """Each model's accuracy (every order asked) against the crowd's share of correct votes on the item."""
    runs = (result.get("models") or {}).get("runs") or []
    k = int(result.get("k", 5))
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    for run in runs:
        points = [(p["share"], p["accuracy"]) for p in run.get("by_vote_share", []) if p.get("accuracy") is not None]
        if points:
            ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=run["label"])
    counts = {p["correct_votes"]: p["items"] for run in runs[:1] for p in run.get("by_vote_share", [])}
    for votes, n in counts.items():
        ax.annotate(f"n={n}", (votes / k, 0.02), ha="center", fontsize=7, color="#666")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(f"share of the crowd's first {k} votes that are correct")
    ax.set_ylabel("model accuracy (every order)")
    ax.set_title("Model accuracy by human vote share")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return fig


def _uncertainty(result: dict[str, Any]) -> Figure:
    """Histogram of p_correct, the probability that an item's gold answer is right (scoring.agreement.uncertainty)."""
    facts = result.get("uncertainty") or {}
    histogram = facts.get("histogram") or {"edges": [0.0, 1.0], "counts": [0]}
    edges = np.asarray(histogram["edges"], dtype=float)
    fig, ax = _pyplot().subplots(figsize=(7, 3.4))
    ax.bar(edges[:-1], histogram["counts"], width=np.diff(edges), align="edge", color="#417690", edgecolor="white")
    ax.set_xlim(0, 1)
    ax.set_xlabel("p_correct: probability that the gold answer is right")
    ax.set_ylabel("items")
    why = (facts.get("model_choice") or {}).get("reason", "")
    ax.set_title(f"Per-item uncertainty ({facts.get('model', '')}): "
                 f"{facts.get('expected_wrong_gold_labels', 0):.1f} wrong gold labels expected"
                 + ("\n" + textwrap.fill(f"why this model: {why}", 110) if why else ""), fontsize=8)
    return fig


PLOTS: dict[str, tuple[str, Callable[[dict[str, Any]], Figure]]] = {
    "votes": ("Distribution of correct votes per component", _votes_per_component),
    "accuracy": ("Accuracy per component", _accuracy_per_component),
    "participants": ("Participant accuracy", _participant_accuracy),
    "timeline": ("Responses over time", _responses_over_time),
    "models": ("Model accuracy by human vote share", _models_by_vote_share),
    "uncertainty": ("Per-item uncertainty: how likely each gold answer is right", _uncertainty),
}


def plot_empty_reason(*, result: dict[str, Any], name: str) -> str:
    """Why a plot would be empty ("" when it has data): the dashboard says so instead of drawing axes alone."""
    components = result.get("components") or {}
    if name == "votes":
        has = any(any((s.get("votes_distribution") or {}).values()) for s in components.values()) or any(
            (result.get("votes_distribution") or {}).values())
        return "" if has else "No correct answers in this study: there are no correct votes to count."
    if name == "accuracy":
        has = result.get("majority_accuracy") is not None or any(
            s.get("majority_accuracy") is not None for s in components.values())
        return "" if has else "No correct answers in this study: accuracy is not defined."
    if name == "participants":
        has = any(p.get("accuracy") is not None for p in result.get("participants", []))
        return "" if has else "No participant answered an item with a correct answer."
    if name == "timeline":
        return "" if result.get("timeline") else "No responses with a time stamp."
    if name == "models":
        runs = (result.get("models") or {}).get("runs") or []
        has = any(p.get("accuracy") is not None for run in runs for p in run.get("by_vote_share", []))
        return "" if has else ("No model annotator has answered known-answer items of this study: annotate it "
                               "with a model (\"annotate it with a model\" above)." if not runs else
                               "No model answer on a complete item with a correct answer.")
    if name == "uncertainty":
        facts = result.get("uncertainty") or {}
        if facts.get("available") and "histogram" in facts:
            return ""
        if facts.get("available"):
            return (f"Likert items: each item's rating distribution and a 95% bootstrap interval of its mean rating "
                    f"are in the items table (rating_mean, rating_mean_low, rating_mean_high, rating_distribution); "
                    f"median interval width {facts.get('mean_interval_width_median')}.")
        return facts.get("reason") or "No per-item uncertainty in this run (a Likert study, or computed before it)."
    return ""


def plot_stamp(*, run: Any, name: str) -> str:
    """What a drawn plot depends on: the run's computation, and for the models' plot the model runs it shows (a model
    run that finished later is added to a computed run: agreement.runs.agreement_run_models_refresh)."""
    stamp = run.computed_at.strftime("%Y%m%dT%H%M%S%f") if run.computed_at else "pending"
    if name == "models":
        stamp += "-m" + "_".join(str(m["model_run"]) for m in ((run.result or {}).get("models") or {}).get("runs", []))
    return stamp


def plot_cached(*, run: Any, name: str, fmt: str = "svg") -> bytes:
    """The plot drawn once per computed run and kept as a file (see core/file_cache.py)."""
    stamp = plot_stamp(run=run, name=name)
    return cached_bytes(key=f"agreement/run-{run.pk}-{stamp}-{name}.{fmt}",
                        render=lambda: plot_render(result=run.result, name=name, fmt=fmt))


def plots_prerender(*, run: Any) -> None:
    """Called when a run finishes: the dashboard's SVGs are ready before anyone opens it."""
    for name in PLOTS:
        if not plot_empty_reason(result=run.result, name=name):
            plot_cached(run=run, name=name, fmt="svg")


def plot_render(*, result: dict[str, Any], name: str, fmt: str = "svg") -> bytes:
    """One dashboard plot as SVG or PNG bytes."""
    if name not in PLOTS:
        raise ApplicationError(f"unknown plot '{name}' (one of {', '.join(PLOTS)})", code=UNKNOWN_PLOT, status=404)
    if fmt not in ("svg", "png"):
        raise ApplicationError(f"plot format '{fmt}' must be svg or png", code=INVALID_FORMAT, status=400)
    fig = PLOTS[name][1](result)
    try:
        fig.tight_layout()
        buffer = io.BytesIO()
        # A fixed hash salt and no date keep the SVG identical for identical data.
        _pyplot().rcParams["svg.hashsalt"] = "stylecrowd"
        fig.savefig(buffer, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else None)
        return buffer.getvalue()
    finally:
        _pyplot().close(fig)
