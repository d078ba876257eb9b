"""Meta-evaluation services: validate a request, score the items with each metric, correlate, store.

Doors: `evaluate_metrics` (CLI, runs in-process: `metric_evaluation_run`), the admin and the API
(`metric_evaluation_start` queues `metric_evaluation_execute` on Celery; model metrics go to the `gpu` queue).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import Study
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, job_progress
from scoring.error_codes import BAD_OPTION
from scoring.metric_evaluation.plots import evaluation_plot_cached
from scoring.model_cache.services import model_cache_used
from scoring.models import MetricEvaluation

from . import metrics_resolve
from .base import Metric, metrics_language_check
from .correlation import by_group, spearman, system_level
from .selectors import RatedItem, likert_study_get, rated_items_select, study_language

BY_GROUPS = ("", "style", "dataset")
GPU_QUEUE = "gpu"
JOB_KIND = "metric_evaluation"
ProgressCallback = Callable[[int, int], None]


@dataclass
class EvaluationRequest:
    study: Study
    question: str
    metrics: list[Metric]
    options: dict[str, dict[str, Any]]  # per metric name, validated
    by: str  # "", "style" or "dataset": the groups correlated apart besides overall
    items: list[RatedItem] = field(default_factory=list)

    @property
    def by_style(self) -> bool:
        return self.by == "style"

    @property
    def needs_model(self) -> bool:
        return any(metric.needs_model for metric in self.metrics)

    def params(self) -> dict[str, Any]:
        return {"options": self.options, "by": self.by}


def metric_options_split(*, metric_names: list[str], options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per-metric options from CLI/admin input: `{metric: {...}}` entries, plus shared `model_path`, `device`,
    `batch_size` that apply to every model metric which does not set its own."""
    shared = {key: options[key] for key in ("model_path", "device", "batch_size") if options.get(key) not in (None, "")}
    per_metric: dict[str, dict[str, Any]] = {}
    for name in metric_names:
        own = {k: v for k, v in (options.get(name) or {}).items() if v not in (None, "")}
        per_metric[name] = {**shared, **own}
    return per_metric


def metric_evaluation_prepare(
    *, study_slug: str, question: str, metric_names: list[str], options: dict[str, Any] | None = None,
    by: str = "",
) -> EvaluationRequest:
    """Check everything that can be checked before any model is loaded; raise ApplicationError otherwise."""
    if by not in BY_GROUPS:
        raise ApplicationError(f"By must be 'style' or 'dataset' (or empty), not {by!r}", code=BAD_OPTION, field="by")
    metrics = metrics_resolve(metric_names)
    study = likert_study_get(slug=study_slug)
    items = rated_items_select(study=study, question=question)
    raw = metric_options_split(metric_names=[m.name for m in metrics], options=options or {})
    checked = {metric.name: metric.check_options(raw[metric.name]) for metric in metrics}
    metrics_language_check(metrics=metrics, options=checked, languages=study_language(study))
    return EvaluationRequest(study=study, question=question, metrics=metrics, options=checked, by=by, items=items)


def _clean(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def metric_evaluation_compute(
    *, request: EvaluationRequest, progress: ProgressCallback | None = None
) -> dict[str, Any]:
    """Score every rated item with every metric and correlate with the mean human rating. Writes nothing."""
    rated = request.items
    items = [r.item for r in rated]
    human = [r.human for r in rated]
    styles = [i.target_style for i in items]
    datasets = [i.dataset for i in items]
    systems = [i.system for i in items]
    total = len(items) * len(request.metrics)
    done = {"n": 0.0}

    def advance(n: float) -> None:
        done["n"] += n
        if progress:
            progress(min(int(done["n"]), total), total)

    columns: dict[str, dict[str, Any]] = {}
    item_scores: list[dict[str, float | None]] = [{} for _ in items]
    timings: dict[str, float] = {}
    for index, metric in enumerate(request.metrics):
        started = time.perf_counter()
        with model_cache_used():  # model outputs computed before (any run, any machine) are read, not recomputed
            scores = metric.score(items, options=request.options[metric.name], progress=advance)
        timings[metric.name] = round(time.perf_counter() - started, 4)
        done["n"] = (index + 1) * len(items)
        if progress:
            progress(int(done["n"]), total)
        for column, values in scores.items():
            values = [_clean(v) for v in values]
            entry: dict[str, Any] = {"metric": metric.name, "overall": spearman(values, human)}
            if request.by == "style":
                entry["by_style"] = by_group(values, human, styles)
            if request.by == "dataset":
                entry["by_dataset"] = by_group(values, human, datasets)
            if any(systems):
                entry["system"] = system_level(values, human, systems)
            columns[column] = entry
            for row, value in zip(item_scores, values, strict=True):
                row[column] = value
    return {
        "question": request.question,
        "by": request.by,
        "n_items": len(items),
        "n_ratings": sum(r.n_ratings for r in rated),
        "styles": {s: styles.count(s) for s in sorted(set(styles))},
        "datasets": {d: datasets.count(d) for d in sorted(set(datasets)) if d},
        "systems": sorted({s for s in systems if s}),
        "columns": columns,
        "timings": timings,
        "items": [
            {"id": r.external_id, "style": r.item.target_style, "system": r.item.system,
             "dataset": r.item.dataset, "human": r.human,
             "n_ratings": r.n_ratings, "scores": scores}
            for r, scores in zip(rated, item_scores, strict=True)
        ],
    }


def metric_evaluation_execute(*, job: Any) -> dict[str, Any]:
    """Body of the Celery task: the evaluation this job fills (its request lives on the evaluation), computed once,
    its plot drawn; the job's result."""

    evaluation = metric_evaluation_stored_compute(
        evaluation_id=MetricEvaluation.objects.values_list("pk", flat=True).get(job=job), job_id=job.pk)
    summary = metric_evaluation_summary(evaluation)
    if (evaluation.results or {}).get("columns"):

        evaluation_plot_cached(evaluation)  # drawn once, now, not when the page is opened
    return {"evaluation": evaluation.pk, "n_items": summary["n_items"],
            "rho": {column: row["rho"] for column, row in summary["correlations"].items()}}


def _evaluation_create(*, request: EvaluationRequest, created_by: str, results: dict[str, Any] | None,
                       job: Any = None) -> Any:

    return MetricEvaluation.objects.create(
        study=request.study, question=request.question, metrics=[m.name for m in request.metrics],
        by_style=request.by_style, params=request.params(), results=results or {}, job=job, created_by=created_by,
        computed_at=timezone.now() if results is not None else None,
    )


def metric_evaluation_run(
    *, study_slug: str, question: str, metric_names: list[str], options: dict[str, Any] | None = None, by: str = "",
    created_by: str = "", progress: ProgressCallback | None = None,
) -> Any:
    """Validate, compute in this process, and store the finished evaluation (the CLI's path)."""
    request = metric_evaluation_prepare(
        study_slug=study_slug, question=question, metric_names=metric_names, options=options, by=by
    )
    results = metric_evaluation_compute(request=request, progress=progress)
    with transaction.atomic():
        return _evaluation_create(request=request, created_by=created_by, results=results)


def metric_evaluation_start(
    *, study_slug: str, question: str, metric_names: list[str], options: dict[str, Any] | None = None, by: str = "",
    created_by: str = "",
) -> Any:
    """Validate, store an empty evaluation with a Job row, and queue the computation once committed."""

    request = metric_evaluation_prepare(
        study_slug=study_slug, question=question, metric_names=metric_names, options=options, by=by
    )
    queue = GPU_QUEUE if request.needs_model else "default"
    with transaction.atomic():
        job = job_create(kind=JOB_KIND, params={"study": study_slug, "question": question,
                                                 "metrics": [m.name for m in request.metrics], "queue": queue},
                         created_by=created_by)
        evaluation = _evaluation_create(request=request, created_by=created_by, results=None, job=job)
        job_enqueue(job=job, task="scoring.evaluate_metrics", args=[evaluation.pk], queue=queue)
    return evaluation


def metric_evaluation_stored_compute(*, evaluation_id: int, job_id: int | None = None) -> Any:
    """Compute a stored evaluation from its request (idempotent: a finished one is left alone)."""

    evaluation = MetricEvaluation.objects.select_related("study").get(pk=evaluation_id)
    if evaluation.is_computed:
        return evaluation
    stored = evaluation.params.get("options") or {}
    request = metric_evaluation_prepare(
        study_slug=evaluation.study.slug, question=evaluation.question, metric_names=list(evaluation.metrics),
        options={name: stored.get(name) or {} for name in evaluation.metrics},
        by=(evaluation.params or {}).get("by") or ("style" if evaluation.by_style else ""),
    )

    def report(done: int, total: int) -> None:
        job_progress(job_id, done, total)

    results = metric_evaluation_compute(request=request, progress=report)
    with transaction.atomic():
        MetricEvaluation.objects.filter(pk=evaluation_id).update(results=results, computed_at=timezone.now())
    evaluation.refresh_from_db()
    return evaluation


def metric_evaluation_summary(evaluation: Any) -> dict[str, Any]:
    """The compact form the CLI prints and the API lists: per column rho, p, n and the system pick."""
    results = evaluation.results or {}
    summary: dict[str, Any] = {}
    for column, entry in (results.get("columns") or {}).items():
        row = {k: entry["overall"].get(k) for k in ("rho", "p", "n")}
        for group in ("by_style", "by_dataset"):
            if group in entry:
                row[group] = {s: {k: v.get(k) for k in ("rho", "p", "n")} for s, v in entry[group].items()}
        if "system" in entry:
            row["system"] = {k: entry["system"].get(k) for k in ("rho", "p", "picks_best", "human_best",
                                                                  "metric_best", "n_systems")}
        summary[column] = row
    return {
        "evaluation": evaluation.pk, "study": evaluation.study.slug, "question": evaluation.question,
        "metrics": evaluation.metrics, "n_items": results.get("n_items"), "n_ratings": results.get("n_ratings"),
        "correlations": summary, "timings": results.get("timings", {}),
    }
