"""Celery tasks of the tasks app: they take ids, load, call one service, and record state on a core.Job row."""
from __future__ import annotations

import shutil
from pathlib import Path

from celery import shared_task

from core.errors import ApplicationError
from core.jobs import job_running, progress_for
from tasks.models import Corpus
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import


@shared_task(acks_late=True, name="tasks.corpus_import")
def corpus_import_task(job_id: int) -> None:
    """Import uploaded files (saved under MEDIA_ROOT by the door that queued this job)."""
    with job_running(job_id) as job:
        if job is None:
            return
        params = job.params
        try:
            corpus, summary = corpus_import(
                name=params["name"], component=params.get("component"), import_format=params["format"],
                paths=params["paths"], seed=params.get("seed", 0),
                min_edit_distance=params.get("min_edit_distance"), detokenize=params.get("detokenize"),
                replace=params.get("replace", False),
                source=params.get("source", ""), licence=params.get("licence", ""),
                progress=progress_for(job_id, every=5000),
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
        job.result = {"corpus_id": corpus.pk, **summary}


@shared_task(acks_late=True, name="tasks.instances_generate")
def instances_generate_task(job_id: int) -> None:
    with job_running(job_id) as job:
        if job is None:
            return
        params = job.params
        corpus = Corpus.objects.select_related("component").get(pk=params["corpus_id"])
        run = instances_generate(
            corpus=corpus, setup=params["setup"], seed=params.get("seed", 0), count=params.get("count"),
            replace=params.get("replace", False), progress=progress_for(job_id, every=5000),
        )
        job.result = {"corpus": corpus.name, "setup": run.setup, "seed": run.seed, "generation_run_id": run.pk,
                      "instances": run.n_instances}
