"""AgreementRun services: create (and queue) a run; execute it (idempotent: a computed run is left alone)."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.error_codes import NO_ITEMS
from annotation.models import Study
from core.commands import json_default
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from scoring.agreement.dashboard import plots_prerender
from scoring.agreement.uncertainty import likert_summary, uncertainty_summary
from scoring.error_codes import INVALID_RESAMPLES
from scoring.model_annotators.comparison import MAX_RUNS, model_comparison_compute
from scoring.models import AgreementRun, ModelRun

from .stats.bootstrap import DEFAULT_RESAMPLES
from .stats.scales import study_scale
from .stats.summary import agreement_compute

JOB_KIND = "agreement_compute"


def json_safe(value: Any) -> Any:
    """Plain JSON (numpy scalars become Python numbers) so a stored result compares equal to a fresh one."""
    return json.loads(json.dumps(value, default=json_default, allow_nan=False))


def agreement_run_start(
    *,
    study: Study,
    question: str = "",
    level: str = "",
    component: str = "",
    k: int | None = None,
    m: int | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    created_by: str = "",
    enqueue: bool = True,
) -> AgreementRun:
    """A new run with its Job row; with `enqueue` it is sent to a Celery worker once the transaction commits."""
    if not study.items.exists():
        raise ApplicationError(f"Study '{study.slug}' has no items yet: there is nothing to compute agreement on.",
                               code=NO_ITEMS)
    study_scale(study=study, question=question, level=level)  # refuse bad parameters before queueing anything
    if resamples < 0:
        raise ApplicationError("resamples must be zero or positive", code=INVALID_RESAMPLES)
    params = {"k": k or study.annotators_per_item, "m": m or study.min_correct, "seed": seed, "resamples": resamples}
    with transaction.atomic():
        job = job_create(kind=JOB_KIND, params={"study": study.slug, **params}, created_by=created_by)
        run = AgreementRun.objects.create(
            study=study, question=question, level=level, component=component, params=params, job=job,
            created_by=created_by,
        )
        job.params = {**job.params, "agreement_run": run.pk}
        job.save(update_fields=["params"])
        if enqueue:

            job_enqueue(job=job, task="scoring.agreement_compute", args=[run.pk])
    return run


def agreement_run_compute(
    *, run_id: int, job_id: int | None = None, progress: Callable[[int, int], None] | None = None
) -> AgreementRun:
    """Compute and store the run's statistics. Running it again after a crash recomputes the same numbers
    (seeded); a run already computed is returned unchanged."""
    run = AgreementRun.objects.select_related("study").get(pk=run_id)
    if run.computed_at is not None:
        return run
    params = run.params
    result, per_item = agreement_compute(
        study=run.study, question=run.question, level=run.level, component=run.component, k=params.get("k"),
        m=params.get("m"), seed=int(params.get("seed", 0)), resamples=int(params.get("resamples", DEFAULT_RESAMPLES)),
        progress=progress or progress_for(job_id, every=20),
    )
    # Model annotators beside the crowd: computed apart, from their own table, after every human figure.

    models = model_comparison_compute(
        study=run.study, question=run.question, level=run.level, component=run.component, k=params.get("k"),
        m=params.get("m"), seed=int(params.get("seed", 0)), resamples=int(params.get("resamples", DEFAULT_RESAMPLES)))
    if models is not None:
        result["models"] = models
    # How likely each gold answer is right (ordering studies): the dashboard's histogram, the items table's columns.
    per_item = _uncertainty_join(run=run, result=result, per_item=per_item, seed=int(params.get("seed", 0)))
    items_path = _write_items(run_id=run.pk, per_item=per_item)
    with transaction.atomic():
        locked = AgreementRun.objects.select_for_update().get(pk=run.pk)
        if locked.computed_at is None:  # another delivery may have finished first: keep its (equal) result
            locked.result = json_safe(result)
            locked.items_path = str(items_path)
            locked.computed_at = timezone.now()
            locked.save(update_fields=["result", "items_path", "computed_at"])
    run.refresh_from_db()
    return run


def _uncertainty_join(*, run: AgreementRun, result: dict[str, Any], per_item: Any, seed: int) -> Any:
    """How sure each item is (scoring.agreement.uncertainty): ordering items' p_correct, Likert items' rating
    distribution and interval of the mean; the summary goes in the result (the dashboard), the figures in the items
    table."""
    if run.study.item_kind == "likert":
        question = study_scale(study=run.study, question=run.question, level=run.level).question
        result["uncertainty"], frame = likert_summary(study=run.study, question=question, seed=seed)
        if frame is None:
            return per_item
        frame = frame.assign(distribution=[json.dumps(d, sort_keys=True) for d in frame["distribution"]])
        columns = frame.set_index("item")[["mean", "mean_low", "mean_high", "distribution"]].add_prefix("rating_")
        return per_item.join(columns, on="item_id")
    result["uncertainty"], frame = uncertainty_summary(study=run.study, seed=seed)
    if frame is None:
        return per_item
    return per_item.join(frame.set_index("item")[["p_correct", "p_correct_low", "p_correct_high"]], on="item_id")


def agreement_run_execute(*, job: Any) -> dict[str, Any]:
    """Body of the Celery task: the run this job fills (its parameters live on the run), computed once, its plots
    drawn; the job's result."""

    run = agreement_run_compute(run_id=AgreementRun.objects.values_list("pk", flat=True).get(job=job), job_id=job.pk)
    plots_prerender(run=run)
    return {"agreement_run": run.pk, "fleiss_kappa": run.result.get("fleiss_kappa"),
            "krippendorff_alpha": run.result.get("krippendorff_alpha")}


def _write_items(*, run_id: int, per_item: Any) -> Path:
    """The per-instance table as Parquet, written to a temporary name then renamed (never half a file)."""
    folder = Path(settings.MEDIA_ROOT) / "agreement"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"run-{run_id}-items.parquet"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    per_item.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def agreement_run_summary(run: AgreementRun) -> dict[str, Any]:
    """The stored result without the per-participant list (for CLI and API answers)."""
    result = dict(run.result)
    result.pop("participants", None)
    return {"agreement_run": run.pk, **result}


def agreement_run_models_refresh(*, run: AgreementRun) -> AgreementRun:
    """A computed run whose `models` section misses a model run of its study that finished since (or shows one
    erased since): that section computed again with the run's own parameters and stored, the crowd's figures left as
    they are. The dashboard calls it, so that a finished model run appears without computing the agreement again."""
    if run.computed_at is None:
        return run
    shown = [m["model_run"] for m in (run.result.get("models") or {}).get("runs", [])]
    latest = list(ModelRun.objects.filter(study=run.study, computed_at__isnull=False)
                  .order_by("-computed_at").values_list("pk", flat=True)[:MAX_RUNS])
    if set(latest) <= set(shown) and set(shown) <= set(latest):
        return run
    params = run.params
    models = model_comparison_compute(
        study=run.study, question=run.question, level=run.level, component=run.component, k=params.get("k"),
        m=params.get("m"), seed=int(params.get("seed", 0)), resamples=int(params.get("resamples", DEFAULT_RESAMPLES)))
    with transaction.atomic():
        locked = AgreementRun.objects.select_for_update().get(pk=run.pk)
        result = {key: value for key, value in locked.result.items() if key != "models"}
        if models is not None:
            result["models"] = models
        locked.result = json_safe(result)
        locked.save(update_fields=["result"])
    run.refresh_from_db()
    return run
