"""Model runs as background jobs: `model_run_start` (every door calls it: checks, stores the run, queues the job),
`model_run_compute` (the Celery task), `model_run_stop` (the stop button).

A run asks every item of its study in every order (`prompts.py`). Replies are cached by (back-end, model, prompt),
so a rerun, or a second study showing the same items, asks nothing again. An endpoint model is asked by up to
`concurrency` threads (I/O-bound: the `default` queue); a local model runs on the `gpu` queue, one question at a
time. The job is idempotent: a redelivered task skips the questions already answered.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.error_codes import INVALID_OPTION, NO_ITEMS
from annotation.models import Study, StudyItem
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, job_progress
from core.model_backends import ModelBackend, ModelReply, ReplyStatus, backend_create, cache_key
from core.paths import data_path_check
from scoring.error_codes import FINISHED
from scoring.models import ModelAnswer, ModelReplyCache, ModelRun

from .prompts import Ask, study_asks, study_kind_check
from .selectors import order_warnings, run_overview

JOB_KIND = "model_annotation"
GPU_QUEUE = "gpu"
DEFAULT_QUEUE = "default"
WRITE_EVERY = 25  # answers written per transaction while a run goes …
WRITE_SECONDS = 2.0  # … or sooner, so the admin's progress and a stopped run show what came in
STOP_POLL_SECONDS = 1.0
LIMITS = {"concurrency": (1, 64), "timeout": (1, 600), "max_retries": (0, 10), "max_tokens": (1, 4096)}


def _number(name: str, label: str, value: Any, *, integer: bool = True) -> Any:
    low, high = LIMITS[name]
    try:
        number = int(value) if integer else float(value)
    except (TypeError, ValueError):
        raise ApplicationError(f"{label}: {value!r} is not a number.", code=INVALID_OPTION, field=name) from None
    if isinstance(value, bool) or not low <= number <= high:
        raise ApplicationError(f"{label}: must be between {low} and {high}, not {value!r}.", code=INVALID_OPTION,
                               field=name)
    return number


def _options(*, backend: str, concurrency: int, timeout: float, max_retries: int, backoff: float, structured: bool,
             max_tokens: int, device: str, price_input: float, price_output: float, limit: int | None,
             api_key_env: str) -> dict[str, Any]:
    options: dict[str, Any] = {
        "concurrency": _number("concurrency", "Concurrency", concurrency) if backend == "openai" else 1,
        "timeout": _number("timeout", "Time-out (seconds)", timeout, integer=False),
        "max_retries": _number("max_retries", "Retries", max_retries),
        "max_tokens": _number("max_tokens", "Max tokens", max_tokens),
        "structured": bool(structured), "device": device or "auto", "api_key_env": api_key_env or "OPENAI_API_KEY",
    }
    for name, label, value in (("backoff", "Back-off (seconds)", backoff),
                               ("price_input", "Price per 1,000 prompt tokens", price_input),
                               ("price_output", "Price per 1,000 completion tokens", price_output)):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ApplicationError(f"{label}: {value!r} is not a number.", code=INVALID_OPTION, field=name) from None
        if not number >= 0:
            raise ApplicationError(f"{label}: must be 0 or more, not {value!r}.", code=INVALID_OPTION, field=name)
        options[name] = number
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ApplicationError(f"Limit: the number of items must be 1 or more, not {limit!r}.",
                                   code=INVALID_OPTION, field="limit")
        options["limit"] = limit
    return options


def backend_for(*, backend: str, model: str, base_url: str, options: dict[str, Any]) -> ModelBackend:
    """The run's back-end, built from what the run stores (the API key comes from the environment)."""
    if backend == "local":
        return backend_create("local", model_dir=model, device=options.get("device", "auto"))
    return backend_create(backend, base_url=base_url, model=model, structured=options.get("structured", True),
                          timeout=options.get("timeout", 60), max_retries=options.get("max_retries", 3),
                          backoff=options.get("backoff", 1.0), max_tokens=options.get("max_tokens", 64),
                          api_key_env=options.get("api_key_env", "OPENAI_API_KEY"))


def model_run_start(
    *, study: Study, backend: str, model: str = "", base_url: str = "", model_dir: str = "", label: str = "",
    concurrency: int = 4, timeout: float = 60.0, max_retries: int = 3, backoff: float = 1.0, structured: bool = True,
    max_tokens: int = 64, device: str = "auto", price_input: float = 0.0, price_output: float = 0.0,
    limit: int | None = None, api_key_env: str = "OPENAI_API_KEY", created_by: str = "", enqueue: bool = True,
    any_path: bool = False,
) -> ModelRun:
    """Check everything that can be checked here (the back-end, the endpoint or the model directory, the study and
    its items, the options), then store the run and queue its job once the transaction commits. Nothing is stored
    when a check fails. A local model directory must lie in the data folders unless `any_path` (the CLI, run by
    whoever runs the server)."""
    study_kind_check(study)
    if not StudyItem.objects.filter(study=study).exists():
        raise ApplicationError(f"Study '{study.slug}' has no items: there is nothing for a model to annotate.",
                               code=NO_ITEMS, field="study")
    options = _options(backend=backend, concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                       backoff=backoff, structured=structured, max_tokens=max_tokens, device=device,
                       price_input=price_input, price_output=price_output, limit=limit, api_key_env=api_key_env)
    model = (model_dir if backend == "local" and model_dir else model or "").strip()
    if backend == "local" and model and not any_path:
        model = data_path_check(model, label="model directory")
    # A start check retries less: the door answers in seconds whether the endpoint is there.
    created = backend_for(backend=backend, model=model, base_url=base_url,
                          options={**options, "max_retries": min(options["max_retries"], 1)})
    try:
        info = created.check()
        identity = created.describe()
    finally:
        created.close()
    study_asks(study=study, items=list(StudyItem.objects.filter(study=study).select_related("instance")
                                       .order_by("position", "id")[:options.get("limit")]))
    queue = GPU_QUEUE if backend == "local" else DEFAULT_QUEUE
    model = str(identity.get("model", model))
    with transaction.atomic():
        job = job_create(kind=JOB_KIND, created_by=created_by,
                         params={"study": study.slug, "backend": backend, "model": model, "queue": queue})
        run = ModelRun.objects.create(
            study=study, label=(label or model.rstrip("/").rsplit("/", 1)[-1])[:120], backend=backend, model=model,
            base_url=identity.get("base_url", ""), options={**options, "check": info}, job=job,
            created_by=created_by,
        )
        job.params = {**job.params, "model_run": run.pk}
        job.save(update_fields=["params"])
        if enqueue:

            job_enqueue(job=job, task="scoring.model_annotators.run", args=[run.pk], queue=queue)
    return run


def model_run_stop(*, run: ModelRun) -> ModelRun:
    """The stop button: no new question is sent; the answers in are kept, and the run ends as stopped."""
    if run.is_computed:
        raise ApplicationError(f"Model run #{run.pk} has finished already.", code=FINISHED, status=409)
    ModelRun.objects.filter(pk=run.pk).update(stop_requested=True)
    run.refresh_from_db()
    return run


class _Stop:
    """Polls the run's stop flag at most once per STOP_POLL_SECONDS."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.last = 0.0
        self.requested = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.requested and now - self.last >= STOP_POLL_SECONDS:
            self.last = now
            self.requested = ModelRun.objects.filter(pk=self.run_id, stop_requested=True).exists()
        return self.requested


def _answer_row(*, run: ModelRun, ask: Ask, reply: ModelReply, key: str, correct: str, cached: bool) -> ModelAnswer:
    answer, value = ask.canonical.get(reply.choice or "", ("", None)) if reply.choice else ("", None)
    status = reply.status if answer else (reply.status if reply.status in ReplyStatus.NO_ANSWER
                                          else ReplyStatus.OUT_OF_CHOICE)
    choices = ask.question.choices
    return ModelAnswer(
        run=run, study_item_id=ask.item_id, question=ask.question_name, order=ask.order, shown=ask.shown,
        displayed_answer=(reply.choice or "")[:500], answer=answer,
        option_index=choices.index(reply.choice) if reply.choice in choices else None, value=value, status=status,
        is_correct=(answer == correct) if correct else None, from_cache=cached,
        prompt_tokens=0 if cached else reply.prompt_tokens, completion_tokens=0 if cached else reply.completion_tokens,
        requests=0 if cached else min(reply.requests, 32767), scores=reply.scores, raw=reply.raw[:2000],
        error=reply.error[:500], cache_key=key,
    )


def model_run_compute(*, run_id: int, job_id: int | None = None,
                      progress: Callable[[int, int], None] | None = None) -> ModelRun:
    """Ask every question not answered yet (cache first), write the answers as they come, honour the stop button,
    and finish the run with its counts and summary. A run already computed is returned unchanged."""
    run = ModelRun.objects.select_related("study").get(pk=run_id)
    if run.is_computed:
        return run
    items = list(StudyItem.objects.filter(study=run.study).select_related("instance").order_by("position", "id")
                 [:run.options.get("limit")])
    correct = {item.pk: item.correct_answer for item in items}
    asks = study_asks(study=run.study, items=items)
    done = set(ModelAnswer.objects.filter(run=run).values_list("study_item_id", "question", "order"))
    pending = [ask for ask in asks if (ask.item_id, ask.question_name, ask.order) not in done]
    total = len(asks)
    ModelRun.objects.filter(pk=run.pk).update(n_items=len(items), n_asks=total)
    report = progress or (lambda n, t: job_progress(job_id, n, t, f"asked {n} of {t}"))
    finished = [len(asks) - len(pending)]
    report(finished[0], total)

    backend = backend_for(backend=run.backend, model=run.model, base_url=run.base_url, options=run.options)
    identity = backend.describe()
    keys = {id(ask): cache_key(backend=identity, question=ask.question) for ask in pending}
    cached = dict(ModelReplyCache.objects.filter(key__in=set(keys.values())).values_list("key", "reply"))
    buffer: list[ModelAnswer] = []
    new_cache: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    last_write = [time.monotonic()]

    def flush() -> None:
        last_write[0] = time.monotonic()
        with transaction.atomic():
            ModelAnswer.objects.bulk_create(buffer, ignore_conflicts=True)
            ModelReplyCache.objects.bulk_create(
                [ModelReplyCache(key=key, backend=identity["backend"], model=str(identity.get("model", ""))[:500],
                                 reply=reply) for key, reply in new_cache.items()], ignore_conflicts=True)
        buffer.clear()
        new_cache.clear()

    def record(ask: Ask, reply: ModelReply, from_cache: bool) -> None:
        key = keys[id(ask)]
        with lock:
            buffer.append(_answer_row(run=run, ask=ask, reply=reply, key=key, correct=correct.get(ask.item_id, ""),
                                      cached=from_cache))
            # A failed call is not kept: the next run asks again.
            if not from_cache and reply.status != ReplyStatus.ERROR:
                new_cache[key] = reply.as_dict()
            finished[0] += 1
            if len(buffer) >= WRITE_EVERY or time.monotonic() - last_write[0] >= WRITE_SECONDS:
                flush()
                report(finished[0], total)

    stop = _Stop(run.pk)
    to_ask = []
    for ask in pending:
        hit = cached.get(keys[id(ask)])
        if hit is not None:
            record(ask, ModelReply.from_dict(hit), True)
        else:
            to_ask.append(ask)
    stopped = False
    try:
        if run.backend == "local" or run.options.get("concurrency", 1) <= 1:
            for ask in to_ask:
                if stop():
                    stopped = True
                    break
                record(ask, backend.answer(ask.question), False)
        else:
            stopped = _ask_concurrently(backend, to_ask, record, stop, int(run.options["concurrency"]))
    finally:
        flush()
        backend.close()
    report(finished[0], total)
    return _finish(run_id=run.pk, stopped=stopped or stop())


def _ask_concurrently(backend: ModelBackend, asks: list[Ask], record: Callable[[Ask, ModelReply, bool], None],
                      stop: Callable[[], bool], concurrency: int) -> bool:
    """At most `concurrency` questions in flight; a stop leaves the unsent ones unsent. An endpoint that refuses
    every request (unreachable, unauthorised, unknown model) ends the run with its error."""
    queue = iter(asks)
    in_flight: dict[Future, Ask] = {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="model-run") as pool:
        def fill() -> None:
            while len(in_flight) < concurrency and not stop():
                ask = next(queue, None)
                if ask is None:
                    return
                in_flight[pool.submit(backend.answer, ask.question)] = ask

        fill()
        while in_flight:
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            for future in finished:
                ask = in_flight.pop(future)
                try:
                    reply = future.result()
                except Exception:
                    for other in in_flight:
                        other.cancel()
                    raise
                record(ask, reply, False)
            fill()
    return stop() or next(queue, None) is not None


def _finish(*, run_id: int, stopped: bool) -> ModelRun:
    with transaction.atomic():
        run = ModelRun.objects.select_for_update().get(pk=run_id)
        if run.is_computed:
            return run
        totals = ModelAnswer.objects.filter(run=run).aggregate(
            answered=Count("id", filter=~Q(answer="")), no_answer=Count("id", filter=Q(answer="")),
            hits=Count("id", filter=Q(from_cache=True)), requests=Sum("requests"), prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"))
        run.n_answered, run.n_no_answer, run.cache_hits = totals["answered"], totals["no_answer"], totals["hits"]
        run.requests = totals["requests"] or 0
        run.prompt_tokens, run.completion_tokens = totals["prompt"] or 0, totals["completion"] or 0
        prices = run.options
        run.cost = (Decimal(run.prompt_tokens) * Decimal(str(prices.get("price_input", 0)))
                    + Decimal(run.completion_tokens) * Decimal(str(prices.get("price_output", 0)))) / 1000
        run.stopped = stopped
        run.summary = run_overview(run)
        run.computed_at = timezone.now()
        run.save()
    return run


def model_run_execute(*, job: Any) -> dict[str, Any]:
    """Body of the Celery task: the run this job fills (its settings live on the run), asked to the end or to its
    stop button; its summary as the job's result."""
    return model_run_summary(model_run_compute(run_id=ModelRun.objects.values_list("pk", flat=True).get(job=job),
                                               job_id=job.pk))


def model_run_summary(run: ModelRun) -> dict[str, Any]:
    """The run at a glance: the CLI's JSON line, the job's result, the API body."""
    summary = run.summary or {}
    return {
        "id": run.pk, "model_run": run.pk, "study": run.study.slug, "label": run.label, "backend": run.backend,
        "model": run.model, "base_url": run.base_url, "computed": run.is_computed, "stopped": run.stopped,
        "stop_requested": run.stop_requested, "items": run.n_items, "asks": run.n_asks, "answered": run.n_answered,
        "no_answer": run.n_no_answer, "requests": run.requests, "cache_hits": run.cache_hits,
        "prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens, "cost": float(run.cost),
        "accuracy": summary.get("accuracy"), "accuracy_answered": summary.get("accuracy_answered"),
        "order_sensitive_share": summary.get("order_sensitive_share"),
        "first_option_share": summary.get("first_option_share"), "warnings": order_warnings(summary),
        "by_status": summary.get("by_status", {}),
        "options": {k: v for k, v in (run.options or {}).items() if k != "check"},
    }
