"""Model-based aggregation as an alternative to the plain majority: Dawid–Skene and MACE through Toloka's
crowd-kit, on the same first-k valid responses of complete items. Reports, per method, how many filter decisions
(validated vs rejected) change against the majority rule, and the workers' estimated reliability. Annotator ids
that are positions (count-only data written out as worker-1 … worker-k) get a warning in words and no per-worker
reliability (`scoring.agreement.positional_ids.positional_ids`); ids where every annotator rated every item get the
warning only.

MACE and GLAD take about a minute per 100,000 items, so they run in a Celery worker with progress.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from annotation.error_codes import NO_ITEMS
from annotation.models import Study
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from scoring.agreement import selectors
from scoring.agreement.positional_ids import positional_ids
from scoring.agreement.stats.votes import first_k_responses, votes_compute
from scoring.error_codes import METHOD, NOTHING_TO_AGGREGATE

METHODS = ("dawid-skene", "mace")


def _model(method: str, seed: int) -> Any:
    # crowd-kit (and the nltk and scipy it pulls in) is imported here, in the worker that runs the job, so that
    # every web and command process does not pay half a second for it at start.
    from crowdkit.aggregation import MACE, DawidSkene

    if method == "dawid-skene":
        return DawidSkene(n_iter=100)
    if method == "mace":
        return MACE(n_restarts=3, n_iter=50, random_state=seed)
    raise ApplicationError(f"unknown aggregation method '{method}' (one of {', '.join(METHODS)})", code=METHOD)


def _reliability(method: str, model: Any, data: pd.DataFrame) -> dict[str, float]:
    """Per-worker reliability: Dawid–Skene's probability of answering correctly (mean diagonal of the worker's
    confusion matrix), MACE's probability of answering truthfully rather than spamming."""
    if method == "dawid-skene":
        errors = model.errors_  # index: (worker, observed label); columns: true label
        out = {}
        for worker, frame in errors.groupby(level=0):
            square = frame.droplevel(0).reindex(index=frame.columns).fillna(0.0).to_numpy()
            out[str(worker)] = float(np.mean(np.diag(square)))
        return out
    spamming = np.asarray(model.spamming_)
    truthful = spamming[:, 1] / spamming.sum(axis=1)
    workers = pd.unique(data["worker"])  # crowd-kit numbers workers in order of first appearance
    return {str(w): float(truthful[i]) for i, w in enumerate(workers)}


def aggregation_compare(
    *, study: Study, methods: tuple[str, ...] = METHODS, seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    k, m = study.annotators_per_item, study.min_correct
    responses = selectors.responses_frame(study_id=study.pk)
    items = selectors.items_frame(study_id=study.pk)
    first_k = first_k_responses(responses=responses, k=k)
    per_item = votes_compute(first_k=first_k, items=items, k=k, m=m).per_item
    scored = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
    if scored.empty:
        raise ApplicationError(f"study '{study.slug}' has no complete items with a correct answer to aggregate",
                               code=NOTHING_TO_AGGREGATE)
    rows = first_k[first_k["item_id"].isin(scored["item_id"])]
    data = pd.DataFrame({"task": rows["item_id"].to_numpy(), "worker": rows["participant_id"].astype(str).to_numpy(),
                         "label": rows["answer"].astype(str).to_numpy()})
    people = selectors.participants_frame(study_id=study.pk)
    imported = people[people["platform"] == "imported"]
    positional, warning = positional_ids(
        items=data["task"].to_numpy(), workers=rows["participant_id"].to_numpy(),
        names=dict(zip(imported["participant_id"], imported["external_id"].astype(str), strict=True)))
    majority = scored.set_index("item_id")["majority_correct"].astype(bool)
    correct = scored.set_index("item_id")["correct_answer"]
    out: dict[str, Any] = {"study": study.slug, "n_items": len(scored), "n_responses": len(data),
                           "majority_validated": int(majority.sum()), "rule": f"{m} of {k}", "methods": {},
                           "annotator_ids": "positions" if positional else "people",
                           "warnings": [warning] if warning else []}
    for index, method in enumerate(methods):
        if progress is not None:
            progress(index, len(methods))
        model = _model(method, seed)
        labels = model.fit_predict(data).reindex(majority.index)
        validated = (labels == correct).fillna(False).astype(bool)
        changed = validated != majority
        # Positions are nobody: no reliability is reported for "worker-5".
        reliability = {} if positional else _reliability(method, model, data)
        values = np.asarray(list(reliability.values())) if reliability else np.zeros(0)
        out["methods"][method] = {
            "validated": int(validated.sum()),
            "accuracy": float(validated.mean()),
            "changed_vs_majority": int(changed.sum()),
            "now_validated": int((changed & validated).sum()),
            "now_rejected": int((changed & ~validated).sum()),
            "changed_items": [int(i) for i in changed[changed].index[:50]],
            "worker_reliability_mean": float(values.mean()) if len(values) else None,
            "least_reliable_workers": sorted(reliability.items(), key=lambda kv: kv[1])[:10],
        }
    if progress is not None:
        progress(len(methods), len(methods))
    return out


def aggregation_start(*, run: Any, created_by: str = "") -> Any:
    """Queue Dawid–Skene and MACE for the run's study as a job."""

    if not run.study.items.exists():
        raise ApplicationError(f"Study '{run.study.slug}' has no items to aggregate.", code=NO_ITEMS)
    params = {"study": run.study.slug, "agreement_run": run.pk}
    job = job_create(kind="crowd_aggregation", params=params, created_by=created_by)
    job_enqueue(job=job, task="scoring.aggregate_crowd")
    return job


def aggregation_execute(*, job: Any) -> dict[str, Any]:
    """Body of the Celery task: the job's row (its params) in, the comparison of the methods out."""

    params, job_id = job.params, job.pk
    study = selectors.study_get(slug=params["study"])
    methods = tuple(params.get("methods") or METHODS)
    result = aggregation_compare(study=study, methods=methods, seed=int(params.get("seed", 0)),
                                 progress=progress_for(job_id))
    return {**result, "agreement_run": params.get("agreement_run")}
