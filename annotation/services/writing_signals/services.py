"""Computing and reading the writing signals of a rewrite study's rewrites.

`writing_signals_compute` measures every signal on every rewrite of a study (all of them: pending, accepted,
rejected) and replaces the study's rows, so the flags follow the study's current thresholds. Telemetry signals
need telemetry (a rewrite without it is shown as "no telemetry"); the LLM-likeness statistic needs a local causal
language model (`language_model`, else settings.STYLECROWD_WRITING_LM; neither: off); the similarity to a model's
own rewrite needs a callable that produces it (`model_rewriter(source, target_style) -> text`, which raises
`measures.NoModelRewrite` where the model gives none; `model_rewrite.study_model_rewriter` builds one for an
OpenAI-compatible endpoint; none: off).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.error_codes import NOT_A_REWRITE_STUDY
from annotation.models import (
    ItemKind,
    Response,
    RewriteReview,
    RewriteSettings,
    Signal,
    Study,
    TelemetryStatus,
    WritingSignal,
)
from annotation.services.writing_signals import measures
from annotation.services.writing_signals.language_model import llm_statistics, model_dir_check
from annotation.services.writing_signals.registry import SPECS, thresholds_resolve
from core.errors import ApplicationError

ModelRewriter = Callable[[str, str], str]  # (source, target style) -> the model's rewrite (NoModelRewrite: none)
NEAR_DUPLICATE_METHODS = ("chars", "embedding")


def study_thresholds(*, study: Study) -> dict[str, float | None]:
    saved = RewriteSettings.objects.filter(study=study).values_list("signal_thresholds", flat=True).first()
    return thresholds_resolve(saved)


def _rewrites(study: Study) -> list[Response]:
    return list(Response.objects.filter(study=study, study_item__kind=ItemKind.REWRITE)
                .select_related("participant", "study_item").order_by("study_item_id", "answered_at", "pk"))


def _embedding_similarity(path: str) -> Callable[[list[str]], Any]:
    def similarity(texts: list[str]) -> Any:
        # heavy: sentence-transformers (torch) loads only when a model runs
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(path, local_files_only=True)
        vectors = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
        return (vectors @ vectors.T) * 100
    return similarity


def writing_signals_compute(
    *, study: Study, language_model: str | None = None, near_duplicate_method: str = "chars",
    embedding_model: str | None = None, model_rewriter: ModelRewriter | None = None, model_name: str = "the model",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Measure, compare with the study's thresholds and store every signal of every rewrite of the study. Returns
    the summary: rewrites, telemetry statuses, flagged rewrites per signal, the signals that were off and why.

    `language_model` (a local directory) and `model_rewriter` switch the two model signals on for this run; without
    them those signals' earlier rows are kept."""
    _arguments_check(study=study, near_duplicate_method=near_duplicate_method, embedding_model=embedding_model)
    if language_model:
        language_model = model_dir_check(language_model)
    thresholds = study_thresholds(study=study)
    rewrites = _rewrites(study)
    measured: dict[int, dict[str, measures.Measure]] = defaultdict(dict)
    off = {name: "switched off by the study's thresholds" for name, value in thresholds.items()
           if name in SPECS and value is None}
    _telemetry_measures(rewrites, measured, thresholds=thresholds)
    by_source = _near_duplicate_measures(rewrites, measured, method=near_duplicate_method,
                                         embedding_model=embedding_model)
    if language_model and thresholds[Signal.LLM_LIKENESS] is not None:
        _llm_measures(rewrites, measured, language_model=language_model, progress=progress)
    elif not language_model:
        off.setdefault(Signal.LLM_LIKENESS, "no local language model configured" if not settings.STYLECROWD_WRITING_LM
                       else "not measured in this run (earlier results kept)")
    model_rewrites: dict[str, Any] | None = None
    if model_rewriter is not None and thresholds[Signal.MODEL_SIMILARITY] is not None:
        model_rewrites = _model_similarity(by_source, measured, model_rewriter=model_rewriter, model_name=model_name,
                                           progress=progress)
    elif model_rewriter is None:
        off.setdefault(Signal.MODEL_SIMILARITY, "no model endpoint configured (earlier results kept)")
    now = timezone.now()
    # The signals this run measured replace their earlier rows; the model signals it did not measure (no model
    # given to this run) keep theirs, so the periodic refresh does not erase what a model run found.
    replaced = [name for name in SPECS if name not in (Signal.LLM_LIKENESS, Signal.MODEL_SIMILARITY)]
    if language_model:
        replaced.append(Signal.LLM_LIKENESS)
    if model_rewriter is not None:
        replaced.append(Signal.MODEL_SIMILARITY)
    rows = _signal_rows(measured, thresholds=thresholds, now=now)
    with transaction.atomic():
        WritingSignal.objects.filter(response__study=study, signal__in=replaced).delete()
        WritingSignal.objects.bulk_create(rows, batch_size=2000)
    flagged: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        if row.flagged:
            flagged[row.signal].add(row.response_id)
    statuses = defaultdict(int)
    for response in rewrites:
        statuses[response.telemetry_status] += 1
    return {
        "study": study.slug, "rewrites": len(rewrites),
        "telemetry": {status: statuses[status] for status in TelemetryStatus.values},
        "flagged_rewrites": len(set().union(*flagged.values())) if flagged else 0,
        "flagged": {name: len(flagged[name]) for name in SPECS if name not in off},
        "off": dict(off), "thresholds": thresholds, "near_duplicate_method": near_duplicate_method,
        "language_model": language_model or None, "model_rewrites": model_rewrites, "computed_at": now.isoformat(),
    }


def _arguments_check(*, study: Study, near_duplicate_method: str, embedding_model: str | None) -> None:
    if study.item_kind != ItemKind.REWRITE:
        raise ApplicationError(f"study {study.slug!r} holds {study.item_kind} items, not rewrites.",
                               code=NOT_A_REWRITE_STUDY, field="study")
    if near_duplicate_method not in NEAR_DUPLICATE_METHODS:
        raise ApplicationError(f"Near-duplicate method must be one of {NEAR_DUPLICATE_METHODS}, not "
                               f"{near_duplicate_method!r}.", field="near_duplicate_method")
    if near_duplicate_method == "embedding" and not embedding_model:
        raise ApplicationError("Near-duplicate method 'embedding' needs an embedding model (a local "
                               "sentence-transformers directory).", field="embedding_model")


Measured = dict[int, dict[str, measures.Measure]]


def _telemetry_measures(rewrites: list[Response], measured: Measured, *, thresholds: dict[str, Any]) -> None:
    """The telemetry signals of every rewrite that came with telemetry."""
    for response in rewrites:
        record = response.telemetry
        if response.telemetry_status == TelemetryStatus.NONE or not record:
            continue
        out = measured[response.pk]
        out[Signal.TELEMETRY_INCONSISTENT] = measures.telemetry_inconsistent(record)
        out[Signal.MOSTLY_PASTED] = measures.mostly_pasted(record)
        speed = measures.typing_speed(record)
        if speed is not None:
            out[Signal.TYPING_SPEED] = speed
        out[Signal.FOCUS_LOSS_INSERT] = measures.focus_loss_insert(
            record, min_chars=thresholds["focus_loss_insert_chars"])


def _near_duplicate_measures(rewrites: list[Response], measured: Measured, *, method: str,
                             embedding_model: str | None) -> dict[int, list[Response]]:
    """Each rewrite against the other rewrites of its source; returns the rewrites grouped by source."""
    similarity = (measures.char_similarity if method == "chars" else _embedding_similarity(embedding_model or ""))
    by_source: dict[int, list[Response]] = defaultdict(list)
    for response in rewrites:
        by_source[response.study_item_id].append(response)
    for group in by_source.values():
        rows = [(r.pk, f"{r.participant.platform}:{r.participant.external_id}", r.answer, r.answered_at)
                for r in group]
        for response_id, measure in measures.near_duplicates(rows, similarity=similarity).items():
            measure.details["method"] = method
            measured[response_id][Signal.NEAR_DUPLICATE] = measure
    return by_source


def _llm_measures(rewrites: list[Response], measured: Measured, *, language_model: str,
                  progress: Callable[[int, int], None] | None) -> None:
    name = Path(language_model).name
    stats = llm_statistics([r.answer for r in rewrites], path=language_model, progress=progress)
    for response, pair in zip(rewrites, stats, strict=True):
        if pair is not None:
            measured[response.pk][Signal.LLM_LIKENESS] = measures.llm_likeness(
                log_ppl=pair[0], entropy=pair[1], model=name)


def _signal_rows(measured: Measured, *, thresholds: dict[str, Any], now: Any) -> list[WritingSignal]:
    """A row per measured signal the study's thresholds keep on, flagged where its score crosses the threshold."""
    rows = []
    for response_id, signals in measured.items():
        for name, measure in signals.items():
            threshold = thresholds[name]
            if threshold is None:
                continue
            flagged = measure.eligible and SPECS[name].flags(measure.score, threshold)
            rows.append(WritingSignal(response_id=response_id, signal=name, score=measure.score,
                                      threshold=threshold, flagged=flagged, evidence=measure.evidence[:500],
                                      details=measure.details, computed_at=now))
    return rows


def _model_similarity(by_source: dict[int, list[Response]], measured: dict[int, dict[str, measures.Measure]], *,
                      model_rewriter: ModelRewriter, model_name: str,
                      progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """Each source's rewrites against the model's own rewrite of it. A source the model gives no text for (it
    declined, replied nothing, did not answer in time: the rewriter raises NoModelRewrite, or returns nothing) has
    the signal "not measured" on its rewrites, with the reason; it never flags them."""
    missing: dict[str, str] = {}
    for done, group in enumerate(by_source.values(), start=1):
        item = group[0].study_item
        try:
            model_text = model_rewriter(item.payload.get("source", ""), item.payload.get("target_style", ""))
            reason = "" if (model_text or "").strip() else "its reply was empty"
        except measures.NoModelRewrite as exc:
            model_text, reason = "", str(exc) or "no reason given"
        if reason:
            missing[item.external_id] = reason
        for response in group:
            measured[response.pk][Signal.MODEL_SIMILARITY] = (
                measures.model_similarity_missing(model=model_name, reason=reason) if reason
                else measures.model_similarity(text=response.answer, model_text=model_text, model=model_name))
        if progress:
            progress(done, len(by_source))
    return {"model": model_name, "sources": len(by_source), "rewritten": len(by_source) - len(missing),
            "not_measured": dict(list(missing.items())[:50]), "not_measured_sources": len(missing)}


# --- reading ------------------------------------------------------------------------------------------------


def signals_of(*, response_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Every stored signal of the given rewrites, flagged ones first, in plain words."""
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    order = list(SPECS)
    for row in (WritingSignal.objects.filter(response_id__in=response_ids)
                .values("response_id", "signal", "score", "threshold", "flagged", "evidence")):
        spec = SPECS[row["signal"]]
        out[row["response_id"]].append({**row, "label": spec.label, "unit": spec.unit})
    for rows in out.values():
        rows.sort(key=lambda r: (not r["flagged"], order.index(r["signal"])))
    return out


def study_signal_summary(*, study: Study, excluded: set[int] | None = None) -> dict[str, Any]:
    """How many rewrites each signal flagged and what was done with them (the review's decision; `excluded`: the
    response ids left out of a corpus), and the telemetry statuses: for the dataset card."""

    rewrites = Response.objects.filter(study=study, study_item__kind=ItemKind.REWRITE)
    statuses = defaultdict(int)
    for status in rewrites.values_list("telemetry_status", flat=True):
        statuses[status] += 1
    decisions = dict(RewriteReview.objects.filter(response__study=study).values_list("response_id", "status"))
    flagged_rows = list(WritingSignal.objects.filter(response__study=study, flagged=True)
                        .values_list("response_id", "signal"))
    computed = WritingSignal.objects.filter(response__study=study).order_by("-computed_at").values_list(
        "computed_at", flat=True).first()
    by_signal: dict[str, dict[str, int]] = {}
    for name in SPECS:
        ids = {rid for rid, signal in flagged_rows if signal == name}
        if ids:
            by_signal[name] = _outcomes(ids, decisions, excluded)
    all_flagged = {rid for rid, _ in flagged_rows}
    return {
        "computed_at": computed.isoformat() if computed else None,
        "rewrites": sum(statuses.values()),
        "telemetry": {status: statuses[status] for status in TelemetryStatus.values},
        "flagged": _outcomes(all_flagged, decisions, excluded),
        "by_signal": by_signal,
        "labels": {name: SPECS[name].label for name in by_signal},
    }


def _outcomes(ids: set[int], decisions: dict[int, str], excluded: set[int] | None) -> dict[str, int]:
    out = {"rewrites": len(ids), "accepted": 0, "rejected": 0, "pending": 0}
    for rid in ids:
        out[decisions.get(rid, "pending")] += 1
    if excluded is not None:
        out["excluded_from_corpus"] = len(ids & excluded)
    return out


def flagged_response_ids(*, study: Study, signals: list[str] | None = None) -> set[int]:
    """The rewrites of a study flagged by any of `signals` (all signals when None)."""
    qs = WritingSignal.objects.filter(response__study=study, flagged=True)
    if signals is not None:
        qs = qs.filter(signal__in=signals)
    return set(qs.values_list("response_id", flat=True))


def signal_recommendations(*, study: Study, recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Participant recommendations with the facts of their rewrites' writing signals, in neutral words (how many
    rewrites carry which signal, how many came without telemetry). Signals never change a recommendation: the
    reviewers' decisions do (`review.review_recommendations`)."""
    if study.item_kind != ItemKind.REWRITE:
        return recs
    written: dict[str, int] = defaultdict(int)
    no_telemetry: dict[str, int] = defaultdict(int)
    for external_id, status in Response.objects.filter(study=study, study_item__kind=ItemKind.REWRITE).values_list(
            "participant__external_id", "telemetry_status"):
        written[external_id] += 1
        no_telemetry[external_id] += status == TelemetryStatus.NONE
    flagged: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for external_id, response_id, name in WritingSignal.objects.filter(response__study=study, flagged=True) \
            .values_list("response__participant__external_id", "response_id", "signal"):
        flagged[external_id][name].add(response_id)
    out = []
    for rec in recs:
        rec = dict(rec)
        pid = rec["participant"]
        by_signal = flagged.get(pid, {})
        rec["writing_signals"] = {name: len(ids) for name, ids in by_signal.items()}
        rec["no_telemetry"] = no_telemetry.get(pid, 0)
        evidence = list(rec.get("evidence", []))
        if by_signal:
            n = len(set().union(*by_signal.values()))
            parts = [f"{SPECS[name].label} ({len(by_signal[name])})" for name in SPECS if name in by_signal]
            evidence.append(f"wrote {n} of {written[pid]} rewrites with writing signals for review: "
                            + ", ".join(parts))
        if rec["no_telemetry"]:
            evidence.append(f"sent {rec['no_telemetry']} of {written[pid]} rewrites without writing telemetry")
        rec["evidence"] = evidence
        out.append(rec)
    return out
