"""Background jobs of the tasks app: `<thing>_start` (the admin, API and CLI doors call it: checks, saves the
uploaded files, queues the job on commit) and `<thing>_execute` (what the Celery task runs, from the job's row)."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from core.models import Job
from tasks.error_codes import (
    ALIGNED_FILES_BY_ROLE,
    CORPUS_EXISTS,
    INSTANCES_EXIST,
    INVALID_COUNT,
    INVALID_NAME,
    MISSING_COMPONENT,
    NO_FILES,
    UNKNOWN_FORMAT,
    UNKNOWN_SETUP,
    UPLOAD_TOO_LARGE,
    WRONG_FILE_FIELD,
)
from tasks.licences import licence_resolve
from tasks.models import Corpus, Setup, TaskInstance
from tasks.services.corpus_formats import CORPUS_FORMATS, FORMATS
from tasks.services.generation import instances_generate
from tasks.services.imports import component_get, corpus_import
from tasks.services.parsers import LineLengthCheck


def upload_size_check(*, files: list[UploadedFile]) -> None:
    """The configured limit (STYLECROWD_UPLOAD_MAX_MB) on one import's files together: 413 above it."""
    limit = int(settings.STYLECROWD_UPLOAD_MAX_MB) * 1024 * 1024
    total = sum(int(upload.size or 0) for upload in files)
    if total > limit:
        raise ApplicationError(
            f"files: {total / 1024 / 1024:.1f} MB uploaded; one import takes at most "
            f"{settings.STYLECROWD_UPLOAD_MAX_MB} MB (STYLECROWD_UPLOAD_MAX_MB). Split the corpus or import it with "
            "the import_corpus command.", code=UPLOAD_TOO_LARGE, status=413)


def upload_files_by_role(
    *, import_format: str, files: list[UploadedFile] | None, style_1_file: UploadedFile | None,
    style_2_file: UploadedFile | None,
) -> list[UploadedFile]:
    """An aligned corpus is two files named by role (style 1, style 2), never by upload order; other formats
    take their files as a list."""
    files = list(files or [])
    spec = CORPUS_FORMATS.get(import_format)
    if spec is not None and spec.files_by_role:
        if files or not (style_1_file and style_2_file):
            raise ApplicationError("aligned: upload the style-1 file and the style-2 file in their own fields "
                                   "(style_1_file, style_2_file), one file each", code=ALIGNED_FILES_BY_ROLE)
        return [style_1_file, style_2_file]
    if style_1_file or style_2_file:
        raise ApplicationError(f"{import_format}: the style-1/style-2 file fields are for the aligned format; "
                               "upload this format's files as files", code=WRONG_FILE_FIELD)
    return files


def _uploads_save(files: list[UploadedFile], upload_dir: Path) -> list[str]:
    """The uploads written to `upload_dir`, each line's length checked as it streams by (a 400 naming the file
    as uploaded and the line; the folder removed, nothing stored)."""
    upload_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    try:
        for index, upload in enumerate(files):
            target = upload_dir / f"{index:02d}-{Path(upload.name or 'upload').name}"
            lines = LineLengthCheck(upload.name or f"file {index + 1}")
            with target.open("wb") as handle:
                for chunk in upload.chunks():
                    lines.feed(chunk)
                    handle.write(chunk)
            paths.append(str(target))
    except ApplicationError:
        shutil.rmtree(upload_dir, ignore_errors=True)
        raise
    return paths


def corpus_import_start(
    *, name: str, component: str | None, import_format: str, files: list[UploadedFile], seed: int = 0,
    min_edit_distance: int | None = None, detokenize: bool | None = None, replace: bool = False, source: str = "",
    licence: str = "", attribution: str = "", language: str = "en", created_by: str = "",
) -> Job:
    """Validate what can be checked up front, save the files and queue the import."""
    if import_format not in FORMATS:
        raise ApplicationError(f"format: unknown format {import_format!r} (one of: {', '.join(FORMATS)})",
                               code=UNKNOWN_FORMAT)
    licence = licence_resolve(licence)
    if not files:
        raise ApplicationError("files: upload at least one file", code=NO_FILES)
    upload_size_check(files=files)
    if component:
        component_get(name=component)
    elif CORPUS_FORMATS[import_format].rows != "instances":  # a STEL file names its own component
        raise ApplicationError("component: required for this format", code=MISSING_COMPONENT)
    if not name.strip():
        raise ApplicationError("name: must not be empty", code=INVALID_NAME)
    if Corpus.objects.filter(name=name).exists() and not replace:
        raise ApplicationError(f"name: corpus '{name}' exists already; set replace to overwrite it",
                               code=CORPUS_EXISTS, status=409)
    upload_dir = Path(settings.MEDIA_ROOT) / "uploads" / uuid.uuid4().hex
    paths = _uploads_save(files, upload_dir)
    params: dict[str, Any] = {
        "name": name, "component": component or None, "format": import_format, "paths": paths,
        "original_names": [f.name for f in files], "seed": seed, "min_edit_distance": min_edit_distance,
        "detokenize": detokenize,
        "replace": replace, "source": source or ", ".join(f.name or "" for f in files), "licence": licence,
        "attribution": attribution, "language": language, "upload_dir": str(upload_dir),
    }

    with transaction.atomic():
        job = job_create(kind="corpus_import", params=params, created_by=created_by)
        job_enqueue(job=job, task="tasks.corpus_import")
    return job


def instances_generate_start(
    *, corpus: Corpus, setup: str, seed: int = 0, count: int | None = None, replace: bool = False,
    created_by: str = "",
) -> Job:

    # What the generation would refuse in the worker, refused here in plain words (no job row is left).
    if setup not in Setup.values:
        raise ApplicationError(f"setup: must be one of {', '.join(Setup.values)}, not '{setup}'",
                               code=UNKNOWN_SETUP)
    n_pairs = corpus.pairs.count()
    if count is not None and not 1 <= count <= n_pairs:
        raise ApplicationError(f"count: must be between 1 and the corpus's {n_pairs} pairs; got {count}",
                               code=INVALID_COUNT)
    if not replace and TaskInstance.objects.filter(corpus=corpus, setup=setup).exists():
        raise ApplicationError(f"corpus '{corpus.name}' has {setup} instances already; tick Replace (API: "
                               '"replace": true) to generate them anew', code=INSTANCES_EXIST, status=409)
    with transaction.atomic():
        job = job_create(kind="instances_generate", created_by=created_by, params={
            "corpus_id": corpus.pk, "corpus": corpus.name, "setup": setup, "seed": seed, "count": count,
            "replace": replace,
        })
        job_enqueue(job=job, task="tasks.instances_generate")
    return job


def corpus_import_execute(*, job: Job) -> dict[str, Any]:
    """Import the files the start service saved (named in the job's params); the uploads are removed after."""

    params = job.params
    try:
        corpus, summary = corpus_import(
            name=params["name"], component=params.get("component"), import_format=params["format"],
            paths=params["paths"], seed=params.get("seed", 0),
            min_edit_distance=params.get("min_edit_distance"), detokenize=params.get("detokenize"),
            replace=params.get("replace", False),
            source=params.get("source", ""), licence=params.get("licence", ""),
            attribution=params.get("attribution", ""), language=params.get("language") or "en",
            progress=progress_for(job.pk, every=5000),
        )
    except ApplicationError as exc:
        # Name the files as the researcher uploaded them, not as they were saved.
        message = exc.message
        for saved, original in zip(params["paths"], params.get("original_names", []), strict=False):
            message = message.replace(saved, original)
        raise ApplicationError(message, code=exc.code, status=exc.status, details=exc.details,
                               field=exc.field) from None
    finally:
        if params.get("upload_dir"):
            shutil.rmtree(Path(params["upload_dir"]), ignore_errors=True)
    return {"corpus_id": corpus.pk, **summary}


def instances_generate_execute(*, job: Job) -> dict[str, Any]:
    params = job.params
    corpus = Corpus.objects.select_related("component").get(pk=params["corpus_id"])
    run = instances_generate(
        corpus=corpus, setup=params["setup"], seed=params.get("seed", 0), count=params.get("count"),
        replace=params.get("replace", False), progress=progress_for(job.pk, every=5000),
    )
    return {"corpus": corpus.name, "setup": run.setup, "seed": run.seed, "generation_run_id": run.pk,
            "instances": run.n_instances}
