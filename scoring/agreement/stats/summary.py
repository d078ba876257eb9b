"""agreement_compute: every statistic of a study in one vectorized pass (overall, per component, per setup)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from annotation.models import Study
from annotation.services.adaptive import study_posterior_rule
from core.errors import ApplicationError
from scoring.agreement import selectors
from scoring.error_codes import INVALID_RULE
from tasks.error_codes import UNKNOWN_COMPONENT

from .accuracy import majority_accuracy, votes_distribution
from .alpha import alpha_counts, krippendorff_alpha_of
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_ROW_BUDGET, bootstrap_ci, resamples_for
from .fleiss import fleiss_kappa_of, fleiss_table
from .participants import participant_stats
from .scales import study_scale
from .setups import triple_vs_quadruple
from .votes import first_k_responses, votes_compute

Progress = Callable[[int, int], None]


def agreement_compute(
    *,
    study: Study,
    question: str = "",
    level: str = "",
    component: str = "",
    k: int | None = None,
    m: int | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    row_budget: int = DEFAULT_ROW_BUDGET,
    progress: Progress | None = None,
    timings: dict[str, float] | None = None,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Returns (summary, per-instance table). Deterministic for the same data, parameters and seed.

    `timings`, when given, receives the seconds spent per phase (kept out of the result, which must not vary)."""
    clock = _Clock(timings)
    scale = study_scale(study=study, question=question, level=level)
    k = int(k or study.annotators_per_item)
    m = int(m or study.min_correct)
    if not 1 <= m <= k:
        raise ApplicationError(f"min correct ({m}) must be between 1 and k ({k})", code=INVALID_RULE)
    responses = selectors.responses_frame(study_id=study.pk, question=scale.question or None)
    items = selectors.items_frame(study_id=study.pk)
    if component:
        items = items[items["component"] == component]
        if items.empty:
            raise ApplicationError(f"study '{study.slug}' has no items of component '{component}'",
                                   code=UNKNOWN_COMPONENT)
        responses = responses[responses["is_screening"] | responses["item_id"].isin(items["item_id"])]
    clock.lap("read")
    first_k = first_k_responses(responses=responses, k=k)
    data = votes_compute(first_k=first_k, items=items, k=k, m=m, rule=study_posterior_rule(study))
    per_item = data.per_item
    first_k = first_k[first_k["item_id"].isin(per_item["item_id"])]
    alpha_all, alpha_domain = alpha_counts(
        answers=first_k["answer"], values=first_k["value"], item_pos=data.item_pos, n_items=len(per_item),
        domain=scale.domain, numeric=scale.numeric,
    )
    participant_codes, _ = pd.factorize(first_k["participant_id"])

    groups: list[tuple[str, str, np.ndarray]] = [("overall", "", np.ones(len(per_item), dtype=bool))]
    for column, section in (("component", "components"), ("setup", "setups")):
        values = per_item[column].to_numpy()
        groups += [(section, str(name), values == name) for name in sorted(set(values)) if name]
    complete = per_item["complete"].to_numpy()
    pairable = alpha_all.sum(axis=1) >= 2  # only units with two or more ratings are pairable
    prepared = []
    for _, _, mask in groups:
        table, used = fleiss_table(counts=data.counts, rows=complete & mask)
        prepared.append({"mask": mask, "fleiss_table": table,
                         "categories": [data.categories[i] for i in used], "alpha_counts": alpha_all[pairable & mask]})
    clock.lap("votes")
    # The issue asks for kappa overall, per component and per setup, alpha overall and per component, each with a
    # bootstrap interval: alpha's per-setup value is reported without one (it is the costliest resample).
    plan = [(resamples_for(p["fleiss_table"].shape[0], requested=resamples, row_budget=row_budget),
             0 if section == "setups" else
             resamples_for(p["alpha_counts"].shape[0], requested=resamples, row_budget=row_budget))
            for (section, _, _), p in zip(groups, prepared, strict=True)]
    total = max(1, sum(a + b for a, b in plan))
    done = [0]

    def step() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    result: dict[str, Any] = {"components": {}, "setups": {}}
    for (section, name, mask), prep, (n_kappa, n_alpha) in zip(groups, prepared, plan, strict=True):
        in_group = mask[data.item_pos]
        stats = _group_stats(
            per_item=per_item[mask], prep=prep, alpha_domain=alpha_domain, level=scale.level, k=k, seed=seed,
            n_kappa=n_kappa, n_alpha=n_alpha, step=step,
            n_annotators=int(np.unique(participant_codes[in_group]).size),
        )
        if section == "overall":
            result.update(stats)
        else:
            result[section][name] = stats
    if progress is not None:
        progress(total, total)
    clock.lap("kappa_alpha_bootstrap")

    participants = selectors.participants_frame(study_id=study.pk)
    result.update({
        "study": study.slug,
        "question": scale.question,
        "level": scale.level,
        "value_domain": [_plain(v) for v in scale.domain],
        "k": k,
        "min_correct": m,
        "seed": seed,
        "bootstrap_resamples_requested": resamples,
        "participants": participant_stats(responses=responses, per_item=per_item, participants=participants),
        "triple_vs_quadruple": triple_vs_quadruple(per_item),
        "irregular": _irregular(per_item=per_item, k=k),
        "timeline": _timeline(responses),
    })
    result["n_participants"] = len(result["participants"])
    result["n_excluded_participants"] = int(participants["excluded"].sum())
    clock.lap("participants_setups_rest")
    return result, per_item


class _Clock:
    def __init__(self, sink: dict[str, float] | None) -> None:
        self._time = time.perf_counter
        self._sink = sink
        self._last = self._time()

    def lap(self, name: str) -> None:
        now = self._time()
        if self._sink is not None:
            self._sink[name] = round(now - self._last, 3)
        self._last = now


def _group_stats(
    *, per_item: pd.DataFrame, prep: dict[str, Any], alpha_domain: np.ndarray, level: str, k: int, seed: int,
    n_kappa: int, n_alpha: int, step: Callable[[], None], n_annotators: int,
) -> dict[str, Any]:
    table = prep["fleiss_table"]
    counts = prep["alpha_counts"]

    def alpha_of(sample: np.ndarray) -> float | None:
        return krippendorff_alpha_of(value_counts=sample, value_domain=alpha_domain, level=level)

    decisions = per_item["decision"].value_counts()
    scored = per_item[per_item["correct_answer"] != ""]
    return {
        "n_items": int((per_item["n_used"] > 0).sum()),
        "n_items_total": len(per_item),
        "n_complete": int(per_item["complete"].sum()),
        "n_incomplete": int(((per_item["n_used"] > 0) & ~per_item["complete"]).sum()),
        "n_annotations": int(per_item["n_used"].sum()),
        "n_annotators": n_annotators,
        "fleiss_kappa": fleiss_kappa_of(table),
        "fleiss_kappa_ci": bootstrap_ci(table=table, statistic=fleiss_kappa_of, seed=seed, resamples=n_kappa,
                                        on_step=step),
        "fleiss_items": int(table.shape[0]),
        "fleiss_categories": prep["categories"],
        "krippendorff_alpha": alpha_of(counts),
        "krippendorff_alpha_ci": bootstrap_ci(table=counts, statistic=alpha_of, seed=seed, resamples=n_alpha,
                                              on_step=step),
        "alpha_units": int(counts.shape[0]),
        "majority_accuracy": majority_accuracy(per_item),
        "response_accuracy": float(scored["n_correct"].sum() / scored["n_used"].sum())
        if len(scored) and scored["n_used"].sum() else None,
        "n_validated": int(decisions.get("validated", 0)),
        "n_rejected": int(decisions.get("rejected", 0)),
        "n_borderline": int(per_item["borderline"].sum()),
        "votes_distribution": votes_distribution(per_item, k=k),
    }


def _irregular(*, per_item: pd.DataFrame, k: int) -> dict[str, Any]:
    over = per_item[per_item["n_valid"] > k]
    under = per_item[(per_item["n_valid"] > 0) & (per_item["n_valid"] < k)]
    unanswered = per_item[per_item["n_valid"] == 0]
    notes = []
    if len(over):
        notes.append(f"{len(over)} instance(s) have more than {k} valid responses: the first {k} in time order "
                     f"are used ({int((over['n_valid'] - k).sum())} later responses ignored)")
    if len(under):
        notes.append(f"{len(under)} instance(s) have fewer than {k} valid responses: reported as incomplete and "
                     "left out of Fleiss' kappa and of filter decisions")
    return {
        "n_over_k": len(over),
        "n_ignored_responses": int((over["n_valid"] - k).sum()),
        "n_incomplete": len(under),
        "n_unanswered": len(unanswered),
        "incomplete_examples": under["external_id"].head(20).tolist(),
        "over_k_examples": over["external_id"].head(20).tolist(),
        "notes": notes,
    }


def _timeline(responses: pd.DataFrame) -> list[dict[str, Any]]:
    """Item responses per day (UTC), valid and excluded, for the dashboard."""
    items = responses[~responses["is_screening"]]
    if items.empty:
        return []
    days = (items["answered_at"].to_numpy() // 86400).astype("int64")
    table = pd.crosstab(days, items["is_valid"].to_numpy())
    out = []
    for day, row in table.iterrows():
        label = pd.Timestamp(int(day) * 86400, unit="s").strftime("%Y-%m-%d")
        out.append({"day": label, "valid": int(row.get(True, 0)), "invalid": int(row.get(False, 0))})
    return out


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
