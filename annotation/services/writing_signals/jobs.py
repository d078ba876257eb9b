"""The writing-signals job: started by the review queue's button, the API and `writing_signals --background`,
run by the Celery task `annotation.writing_signals` (on the `gpu` queue when a language model is used)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from annotation.error_codes import NOT_A_REWRITE_STUDY
from annotation.models import ItemKind, Response, RewriteSettings, Study, WritingSignal
from annotation.services.review import review_autoflag
from annotation.services.writing_signals.language_model import model_dir_check
from annotation.services.writing_signals.model_rewrite import RewriteModel, rewrite_model_options, study_model_rewriter
from annotation.services.writing_signals.registry import auto_reject_validate, thresholds_validate
from annotation.services.writing_signals.services import NEAR_DUPLICATE_METHODS
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from core.models import Job
from core.paths import data_path_check


def rewrite_study_get(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug {slug!r}.", code=NOT_FOUND, status=404, field="study")
    if study.item_kind != ItemKind.REWRITE:
        raise ApplicationError(f"Study {slug!r} holds {study.item_kind} items, not rewrites.",
                               code=NOT_A_REWRITE_STUDY, field="study")
    return study


def signal_settings_update(*, study: Study, thresholds: Any = None, auto_reject: Any = None) -> RewriteSettings:
    """Save a reviewed rewrite study's thresholds (merged into the saved ones) and auto-reject rule (replaced)."""
    new_thresholds = thresholds_validate(thresholds)
    rule = auto_reject_validate(auto_reject) if auto_reject is not None else None
    rewrite_settings = RewriteSettings.objects.filter(study=study).first()
    if rewrite_settings is None:
        if new_thresholds or rule:
            raise ApplicationError(f"Study {study.slug!r} is not a reviewed rewrite study: its signals use the default "
                                   "thresholds, and nothing is rejected without a reviewer.", field="study")
        return RewriteSettings(study=study)
    fields = []
    if new_thresholds:
        rewrite_settings.signal_thresholds = {**rewrite_settings.signal_thresholds, **new_thresholds}
        fields.append("signal_thresholds")
    if rule is not None:
        rewrite_settings.signal_auto_reject = rule
        fields.append("signal_auto_reject")
    if fields:
        rewrite_settings.save(update_fields=fields)
    return rewrite_settings


def writing_signals_options(*, language_model: str | None, near_duplicate_method: str, embedding_model: str | None,
                            check_paths: bool, rewrite_model_url: str | None = None, rewrite_model: str | None = None,
                            api_key_env: str | None = None) -> dict[str, Any]:
    """The models a run uses, checked as every door checks them: given directories (inside the data folders for the
    web doors), else settings.STYLECROWD_WRITING_LM for the language model; the endpoint that writes the model's
    own rewrites (`rewrite_model`: a RewriteModel, or None) answers."""

    if near_duplicate_method not in NEAR_DUPLICATE_METHODS:
        raise ApplicationError(f"Near-duplicate method must be one of {NEAR_DUPLICATE_METHODS}, not "
                               f"{near_duplicate_method!r}.", field="near_duplicate_method")
    paths = {"language_model": language_model, "embedding_model": embedding_model}
    if near_duplicate_method == "embedding" and not embedding_model:
        raise ApplicationError("Near-duplicate method 'embedding' needs an embedding model (a local "
                               "sentence-transformers directory).", field="embedding_model")
    for field, path in paths.items():
        if path:
            if check_paths:  # a path typed into a web door must lie inside the data folders
                data_path_check(path, label="model directory")
            paths[field] = model_dir_check(path, field=field)
    if not paths["language_model"] and settings.STYLECROWD_WRITING_LM:
        paths["language_model"] = model_dir_check(settings.STYLECROWD_WRITING_LM, field="STYLECROWD_WRITING_LM")
    return {**paths, "rewrite_model": rewrite_model_options(base_url=rewrite_model_url, model=rewrite_model,
                                                            api_key_env=api_key_env)}


def writing_signals_run(*, study: Study, options: dict[str, Any],
                        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """One measurement with checked `options` (`writing_signals_options`, or a job's params): the review service's
    auto-flag, with the model rewriter opened for the run (the API key read from the environment here) and
    closed after it."""

    endpoint = options.get("rewrite_model")
    if isinstance(endpoint, dict):
        endpoint = RewriteModel.from_params(endpoint)
    rewriter = study_model_rewriter(study=study, endpoint=endpoint) if endpoint else None
    try:
        summary = review_autoflag(study=study, language_model=options.get("language_model"),
                                  near_duplicate_method=options.get("near_duplicate_method") or "chars",
                                  embedding_model=options.get("embedding_model"), model_rewriter=rewriter,
                                  model_name=endpoint.model if endpoint else "the model", progress=progress)
    finally:
        if rewriter is not None:
            rewriter.close()
    if rewriter is not None and summary.get("model_rewrites"):
        summary["model_rewrites"] = {**summary["model_rewrites"], **rewriter.summary()}
    return summary


def writing_signals_start(
    *, study_slug: str, thresholds: Any = None, auto_reject: Any = None, language_model: str | None = None,
    near_duplicate_method: str = "chars", embedding_model: str | None = None, rewrite_model_url: str | None = None,
    rewrite_model: str | None = None, api_key_env: str | None = None, created_by: str = "",
    check_paths: bool = False,
) -> Job:
    """Check the input, save the study's thresholds and rule, and queue the computation (and the rule) as a job.
    `language_model` defaults to settings.STYLECROWD_WRITING_LM; `rewrite_model_url` + `rewrite_model` switch on
    the similarity to the model's own rewrites (the job stores the name of the key's variable, never the key)."""

    study = rewrite_study_get(study_slug)
    paths = writing_signals_options(language_model=language_model, near_duplicate_method=near_duplicate_method,
                                    embedding_model=embedding_model, check_paths=check_paths,
                                    rewrite_model_url=rewrite_model_url, rewrite_model=rewrite_model,
                                    api_key_env=api_key_env)
    endpoint = paths["rewrite_model"]
    with transaction.atomic():
        signal_settings_update(study=study, thresholds=thresholds, auto_reject=auto_reject)
        job = job_create(kind="writing_signals", created_by=created_by, params={
            "study": study.slug, "language_model": paths["language_model"],
            "near_duplicate_method": near_duplicate_method, "embedding_model": paths["embedding_model"],
            "rewrite_model": endpoint.params() if endpoint else None})
        heavy = paths["language_model"] or near_duplicate_method == "embedding"
        job_enqueue(job=job, task="annotation.writing_signals", queue="gpu" if heavy else None)
    return job


def writing_signals_execute(*, job: Job) -> dict[str, Any]:
    params = job.params
    study = rewrite_study_get(params["study"])
    return writing_signals_run(study=study, options=params, progress=progress_for(job.pk))


def writing_signals_refresh() -> dict[str, Any]:
    """The periodic auto-flag: every active reviewed rewrite study with rewrites newer than its signals gets the
    signals that need no model measured again, and its auto-reject rule applied. Returns the studies refreshed."""

    refreshed = []
    for study in Study.objects.filter(status=Study.Status.ACTIVE, item_kind=ItemKind.REWRITE,
                                      rewrite_settings__isnull=False):
        newest = Response.objects.filter(study=study).aggregate(at=Max("answered_at"))["at"]
        computed = WritingSignal.objects.filter(response__study=study).aggregate(at=Max("computed_at"))["at"]
        if newest is not None and (computed is None or newest > computed):
            summary = review_autoflag(study=study)
            refreshed.append({"study": study.slug, "flagged_rewrites": summary["flagged_rewrites"],
                              "auto_rejected": summary["auto_rejected"]})
    return {"studies": refreshed}
