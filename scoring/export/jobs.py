"""Benchmark exports from the browser and the API: checked, then written by a Celery job under
MEDIA_ROOT/exports/<job id>/, and downloaded by id (never by server path) by users who may view exports."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import FileResponse

from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue
from core.models import Job
from scoring.agreement import selectors
from scoring.export.formats import FORMATS, STATUSES, _instances, benchmark_export, card_paths
from scoring.models import BenchmarkExport

JOB_KIND = "benchmark_export"
EXTENSIONS = {"stel-tsv": "tsv", "jsonl": "jsonl", "parquet": "parquet"}
DOWNLOADS = ("data", "card", "card-md")


def export_start(*, fmt: str, status: str = "validated", corpus: str = "", component: str = "", setup: str = "",
                 study_slug: str = "", created_by: str = "") -> Job:
    """Check the selection now (so the form can say what is wrong), then queue the export as a job."""
    if fmt not in FORMATS:
        raise ApplicationError(f"Format must be one of {', '.join(FORMATS)}, not '{fmt}'.", code="invalid_format")
    if status not in STATUSES:
        raise ApplicationError(f"Status must be one of {', '.join(STATUSES)}, not '{status}'.",
                               code="invalid_status")
    study = selectors.study_get(slug=study_slug) if study_slug else None
    if _instances(corpus=corpus, component=component, setup=setup, status=status, study=study).empty:
        raise ApplicationError("No task instances match this selection: nothing to export.",
                               code="nothing_to_export")
    params = {"format": fmt, "status": status, "corpus": corpus, "component": component, "setup": setup,
              "study": study_slug}
    from scoring.celery_tasks.export import benchmark_export_task

    with transaction.atomic():
        job = job_create(kind=JOB_KIND, params=params, created_by=created_by)
        job_enqueue(job=job, task=benchmark_export_task)
    return job


def export_execute(*, job: Job) -> dict[str, Any]:
    """The job's body: write the file and its dataset card; the result names the BenchmarkExport."""
    params = job.params
    name = "-".join(part for part in ("stel", params.get("study") or params.get("corpus") or "all",
                                      params["status"]) if part)
    out = Path(settings.MEDIA_ROOT) / "exports" / str(job.pk) / f"{name}.{EXTENSIONS[params['format']]}"
    export = benchmark_export(fmt=params["format"], out=out, corpus=params.get("corpus", ""),
                              component=params.get("component", ""), setup=params.get("setup", ""),
                              status=params["status"], study_slug=params.get("study", ""),
                              created_by=job.created_by)
    return {"export": export.pk, "rows": export.n_rows, "format": export.format, "sha256": export.sha256}


def export_file(*, export: BenchmarkExport, which: str) -> FileResponse:
    """The export's data file or dataset card (JSON or Markdown) as an attachment."""
    if which not in DOWNLOADS:
        raise ApplicationError(f"Download one of {', '.join(DOWNLOADS)}, not '{which}'.", code="invalid_file")
    data = Path(export.path)
    path = {"data": data, "card": Path(export.card_path) if export.card_path else card_paths(data)[0],
            "card-md": card_paths(data)[1]}[which]
    return file_download(path=path, what=f"export #{export.pk}'s {which} file")


def file_download(*, path: Path, what: str) -> FileResponse:
    if not path.is_file():
        raise ApplicationError(f"The {what} is no longer on the server.", code="file_missing", status=410)
    return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)


def predictions_download(*, run: Any) -> FileResponse:
    """A score run's per-instance predictions (TSV), once computed."""
    if not run.predictions_path:
        raise ApplicationError(f"Score run #{run.pk} has no predictions yet.", code="not_computed", status=409)
    return file_download(path=Path(run.predictions_path), what=f"score run #{run.pk}'s predictions file")
