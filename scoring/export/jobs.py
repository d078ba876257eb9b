"""Benchmark exports from the browser and the API: checked, then written by a Celery job under
MEDIA_ROOT/exports/<job id>/, and downloaded by id (never by server path) by users who may view exports."""
from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import FileResponse

from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue
from core.models import Job
from scoring.error_codes import FILE_MISSING, INVALID_FILE, NOT_COMPUTED, SALT_MISSING
from scoring.export.formats import EXPORT_FORMATS, card_paths, croissant_path
from scoring.export.selection import Selection
from scoring.export.services import benchmark_export, export_check, export_selection_check
from scoring.models import BenchmarkExport

JOB_KIND = "benchmark_export"
FILE_DOWNLOADS = ("data", "card", "card-md", "croissant")
FOLDER_DOWNLOADS = ("zip", "card", "card-md", "croissant")
DOWNLOADS = ("data", "zip", "card", "card-md", "croissant")


def export_start(*, fmt: str, status: str = "validated", corpus: str = "", component: str = "", setup: str = "",
                 study_slug: str = "", name: str = "", ids_only: bool = False, created_by: str = "",
                 salt: str = "") -> Job:
    """Check the selection now (so the form can say what is wrong), then queue the export as a job.

    `salt` (benchmark_export's release salt) is a job parameter only until the job has run: `export_execute`
    replaces it with `"salted": true` whether the export succeeds or fails, so no finished job holds it (with the
    pseudonym key it would re-link this release to others). A worker that dies mid-run leaves it for the retry."""
    selection = Selection(corpus=corpus, component=component, setup=setup, status=status, study=study_slug)
    _, study, name = export_check(fmt=fmt, selection=selection, name=name, ids_only=ids_only)
    export_selection_check(selection=selection, study=study, ids_only=ids_only)
    params = {"format": fmt, "status": status, "corpus": corpus, "component": component, "setup": setup,
              "study": study_slug, "name": name, "ids_only": ids_only,
              **({"salt": salt, "salted": True} if salt else {})}

    with transaction.atomic():
        job = job_create(kind=JOB_KIND, params=params, created_by=created_by)
        job_enqueue(job=job, task="scoring.benchmark_export")
    return job


def export_execute(*, job: Job) -> dict[str, Any]:
    """The job's body: write the export, its card and Croissant; the result names the BenchmarkExport."""
    params = job.params
    spec = EXPORT_FORMATS[params["format"]]
    name = params.get("name") or "-".join(part for part in (
        "stel", params.get("study") or params.get("corpus") or "all", params["status"]) if part)
    folder = Path(settings.MEDIA_ROOT) / "exports" / str(job.pk)
    out = folder / name if spec.folder else folder / f"{name}.{spec.extension}"
    salt = params.get("salt", "")
    if params.get("salted") and not salt:
        # Written unsalted, the votes table would join this release with every unsalted one: refuse instead.
        raise ApplicationError("The release salt of this export is no longer stored (the job ran before); start "
                               "the export again with its salt.", code=SALT_MISSING, status=409)
    try:
        export = benchmark_export(fmt=params["format"], out=out, corpus=params.get("corpus", ""),
                                  component=params.get("component", ""), setup=params.get("setup", ""),
                                  status=params["status"], study_slug=params.get("study", ""),
                                  name=params.get("name", ""), ids_only=bool(params.get("ids_only")),
                                  created_by=job.created_by, salt=salt)
    finally:
        if salt:
            Job.objects.filter(pk=job.pk).update(params={k: v for k, v in params.items() if k != "salt"})
    return {"export": export.pk, "rows": export.n_rows, "format": export.format, "sha256": export.sha256,
            "name": export.name, "version": export.version}


def export_downloads(export: BenchmarkExport) -> tuple[str, ...]:
    return FOLDER_DOWNLOADS if EXPORT_FORMATS[export.format].folder else FILE_DOWNLOADS


def export_file(*, export: BenchmarkExport, which: str) -> FileResponse:
    """The export's data file (a hub folder: as a zip), its dataset card (JSON or Markdown) or its Croissant."""
    allowed = export_downloads(export)
    if which not in allowed:
        raise ApplicationError(f"Download one of {', '.join(allowed)}, not '{which}'.", code=INVALID_FILE)
    folder = EXPORT_FORMATS[export.format].folder
    data = Path(export.path)
    if which == "zip":
        return folder_zip_download(folder=data, what=f"export #{export.pk}'s folder")
    path = {"data": data, "card": Path(export.card_path) if export.card_path else card_paths(data, folder=folder)[0],
            "card-md": card_paths(data, folder=folder)[1],
            "croissant": croissant_path(data, folder=folder)}[which]
    return file_download(path=path, what=f"export #{export.pk}'s {which} file")


def folder_zip_download(*, folder: Path, what: str) -> FileResponse:
    """The folder as one zip (files in sorted order under the folder's name), built in a temporary file."""
    if not folder.is_dir():
        raise ApplicationError(f"The {what} is no longer on the server.", code=FILE_MISSING, status=410)
    handle = tempfile.TemporaryFile()
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(path, arcname=f"{folder.name}/{path.relative_to(folder).as_posix()}")
    handle.seek(0)
    return FileResponse(handle, as_attachment=True, filename=f"{folder.name}.zip", content_type="application/zip")


def file_download(*, path: Path, what: str) -> FileResponse:
    if not path.is_file():
        raise ApplicationError(f"The {what} is no longer on the server.", code=FILE_MISSING, status=410)
    return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)


def predictions_download(*, run: Any) -> FileResponse:
    """A score run's per-instance predictions (TSV), once computed."""
    if not run.predictions_path:
        raise ApplicationError(f"Score run #{run.pk} has no predictions yet.", code=NOT_COMPUTED, status=409)
    return file_download(path=Path(run.predictions_path), what=f"score run #{run.pk}'s predictions file")
