"""Score runs as background jobs: `score_run_start` (admin/API door) and `score_run_compute` (the Celery task).

A run with a method that loads a model (`st:`, `hf:`, `nsp:`, or a user's method with `needs_model`) is queued on
the `gpu` queue, so a GPU machine can run a worker that consumes only model work (`celery -A config worker -Q gpu
--concurrency 1`, see docs/gpu-worker.md); a run of lexical methods only (char3gram, punctuation, …) needs no
model and goes to the default queue, which every install's worker serves.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.selectors import study_language
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, job_progress
from core.paths import data_path_check
from scoring.models import BenchmarkExport, ScoreRun

from .benchmark_io import benchmark_set_read
from .methods import method_create, methods_language_check, methods_need_model, methods_parse
from .services import stel_score

GPU_QUEUE = "gpu"
JOB_KIND = "score_stel"


def score_run_queue(specs: list[str]) -> str:
    """The queue a run of these methods goes to: `gpu` when one loads a model, else the default queue."""
    return GPU_QUEUE if methods_need_model(specs) else settings.CELERY_TASK_DEFAULT_QUEUE


def _export_path(export_id: int) -> str:
    export = BenchmarkExport.objects.filter(pk=export_id).first()
    if export is None:
        raise ApplicationError(f"benchmark export #{export_id} does not exist", status=404, code=NOT_FOUND)
    if export.ids_only:  # every format with texts is read (benchmark_io); an ids-only one has none to score
        raise ApplicationError(f"benchmark export #{export_id} is ids-only (no texts): rebuild it with "
                               "rebuild_benchmark, then score the rebuilt file")
    return export.path


def _server_paths(given: list[str] | tuple[str, ...] | None, *, any_path: bool) -> list[str]:
    """Absolute paths (the worker that reads them may run in another working directory). A web door's path is
    checked as the researcher gave it, so a refusal names that text, never what it resolves to (a
    /proc/self/… link would tell the worker's pid)."""
    texts = [str(p).strip() for p in (given or []) if str(p).strip()]
    if any_path:
        return [str(Path(text).resolve()) for text in texts]
    return [data_path_check(text, label="benchmark file") for text in texts]


def _export_language(export_id: int | None) -> str:
    """The language of an exported benchmark's study (annotation's `study_language`), English without one."""
    export = BenchmarkExport.objects.filter(pk=export_id).select_related("study").first() if export_id else None
    return study_language(export.study) if export is not None and export.study is not None else "en"


def score_run_start(
    *,
    methods: list[str] | str,
    benchmark_paths: list[str] | None = None,
    export_id: int | None = None,
    full_paths: list[str] | None = None,
    seed: int = 0,
    device: str = "auto",
    compare: list[str] | str | None = None,
    created_by: str = "",
    any_path: bool = False,
    language: str = "",
) -> Any:
    """Validate the benchmark files and method specs now (so the door can show the error), then store a ScoreRun
    and queue its job once the transaction commits (on `gpu` when a method loads a model). Server paths (benchmark
    files, model directories) must lie in the data folders unless `any_path` (the CLI, run by whoever runs the
    server). `language` is the benchmark's (BCP 47; empty: the exported study's, else English): a method made for
    another language is refused here."""

    paths = _server_paths(benchmark_paths, any_path=any_path)
    if export_id is not None:
        paths.insert(0, _export_path(export_id))
    if not paths:
        raise ApplicationError("choose a benchmark export or give at least one server-side benchmark path")
    full = _server_paths(full_paths, any_path=any_path)
    specs = methods_parse(methods) if isinstance(methods, str) else methods_parse(",".join(methods))
    if not any_path:
        for spec in specs:
            _, _, location = spec.partition(":")
            if "/" in location:
                data_path_check(location, label="model directory")
    compared = (methods_parse(compare) if isinstance(compare, str) else list(compare)) if compare else []
    if compared and (len(compared) < 2 or any(spec not in specs for spec in compared)):
        raise ApplicationError(f"compare needs two or more of the methods ({', '.join(specs)})")
    if device not in ScoreRun.Device.values:
        raise ApplicationError(f"device must be auto, cpu or cuda, not '{device}'")
    if seed < 0:
        raise ApplicationError(f"seed must be 0 or more, not {seed}")
    benchmark_set_read(paths)
    if full:
        benchmark_set_read(full)
    methods_language_check(specs=specs, language=language or _export_language(export_id))
    for spec in specs:
        # Checks names, model directories and custom classes; CUDA is checked by the worker that has it.
        method_create(spec, device="cpu").close()

    queue = score_run_queue(specs)
    with transaction.atomic():
        job = job_create(kind=JOB_KIND, params={"queue": queue, "methods": specs}, created_by=created_by)
        run = ScoreRun.objects.create(
            export_id=export_id, benchmark_paths=paths, full_paths=full, methods=specs, compare=compared, seed=seed,
            device=device, job=job, created_by=created_by,
        )
        directory = Path(settings.MEDIA_ROOT) / "score_runs"
        run.predictions_path = str(directory / f"score-run-{run.pk}-predictions.tsv")
        run.save(update_fields=["predictions_path"])
        job.params = {**job.params, "score_run": run.pk}
        job.save(update_fields=["params"])
        job_enqueue(job=job, task="scoring.model_scoring.score_run", args=[run.pk], queue=queue)
    return run


def score_run_compute(*, run_id: int, job_id: int | None = None) -> Any:
    """Compute a stored run (idempotent: a computed run is returned as it is) and store its results."""

    run = ScoreRun.objects.get(pk=run_id)
    if run.is_computed:
        return run
    n_methods = len(run.methods)
    unit = 1000  # progress units per method, so a model's batches move the bar smoothly

    def progress(spec: str, done: int, total: int) -> None:
        index = run.methods.index(spec)
        job_progress(job_id, index * unit + (unit * done // max(total, 1)), n_methods * unit, f"scoring {spec}")

    if run.predictions_path:
        Path(run.predictions_path).parent.mkdir(parents=True, exist_ok=True)
    results = stel_score(
        benchmark_paths=run.benchmark_paths, full_paths=run.full_paths or None, methods=run.methods, seed=run.seed,
        device=run.device, predictions_path=run.predictions_path or None, compare=run.compare or None,
        progress=progress,
    )
    with transaction.atomic():
        run = ScoreRun.objects.select_for_update().get(pk=run_id)
        if not run.is_computed:
            run.results = results
            run.computed_at = timezone.now()
            run.save(update_fields=["results", "computed_at"])
    return run


def score_run_execute(*, job: Any) -> dict[str, Any]:
    """Body of the Celery task: the run this job fills (its parameters live on the run), computed once; its
    summary as the job's result."""

    return score_run_summary(score_run_compute(run_id=ScoreRun.objects.values_list("pk", flat=True).get(job=job),
                                               job_id=job.pk))


def score_run_summary(run: Any) -> dict[str, Any]:
    """Overall accuracy per set and method: what the job row, the list page and the API show at a glance."""
    sets = (run.results or {}).get("sets") or {}
    return {
        "id": run.pk, "methods": run.methods, "benchmark_paths": run.benchmark_paths, "full_paths": run.full_paths,
        "export": run.export_id, "seed": run.seed, "device": run.device, "computed": run.is_computed,
        "predictions_path": run.predictions_path if run.is_computed else "",
        "accuracy": {name: {spec: table["overall"]["accuracy"] for spec, table in body["methods"].items()}
                     for name, body in sets.items()},
    }
