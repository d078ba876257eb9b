"""Review of rewrites, as GYAFC's experts reviewed theirs: accept, or reject with a reason the
worker is shown on their next visit; a rejected rewrite is invalidated and its slot released, so the assignment
engine hands the source to another worker until k rewrites are accepted. Blocking a worker refuses their later
sessions and flags their pending rewrites; a qualification rule admits only workers with enough accepted rewrites
at a high enough acceptance rate in earlier studies (GYAFC's expert-only tune/test collection)."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.utils import timezone

from annotation.error_codes import BLOCKED, NOT_QUALIFIED
from annotation.models import (
    Batch,
    ItemKind,
    Participant,
    RejectionReason,
    Reservation,
    Response,
    RewriteReview,
    RewriteSettings,
    Study,
    TelemetryStatus,
    WorkerBlock,
    WritingSignal,
)
from annotation.services.engine import reservations_release
from annotation.services.writing_signals.registry import SPECS
from annotation.services.writing_signals.services import signals_of, writing_signals_compute
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.pseudonyms import person_key
from tasks.error_codes import CONFLICT

DECISIONS = ("accept", "reject")


def _person_q(prefix: str, platform: str, external_id: str) -> Q:
    return Q(**{f"{prefix}platform": platform, f"{prefix}external_id": external_id})


def worker_admission_check(*, study: Study, platform: str, participant_id: str) -> None:
    """Refuse a blocked worker (any study) and, in a study with a qualification rule, an unqualified one."""
    if not participant_id:
        return
    # A block outlives retention as the person's key (platforms/services/retention.py).
    block = WorkerBlock.objects.filter(platform=platform, external_id__in=(
        participant_id, person_key(platform=platform, external_id=participant_id))).first()
    if block is not None:
        raise ApplicationError("You can no longer take part in these rewriting studies: a reviewer blocked your "
                               "account after repeated rejected rewrites.", code=BLOCKED, status=403,
                               details={"participant": ["blocked"]})
    if study.item_kind != ItemKind.REWRITE:
        return
    rule = RewriteSettings.objects.filter(study=study).values_list(
        "qualification_min_accepted", "qualification_min_rate").first()
    if rule and (rule[0] or rule[1]):
        stats = worker_stats(platform=platform, external_id=participant_id, exclude_study=study)
        if stats["accepted"] < rule[0] or stats["rate"] < rule[1]:
            raise ApplicationError(
                f"This study is open to writers with at least {rule[0]} accepted rewrites and an acceptance rate of "
                f"at least {rule[1]:.0%} in earlier studies.", code=NOT_QUALIFIED, status=403,
                details={"accepted": [str(stats["accepted"])], "rate": [f"{stats['rate']:.3f}"]})


def _reviews(qs: QuerySet[RewriteReview]) -> dict[str, int]:
    counts = defaultdict(int)
    for status in qs.values_list("status", flat=True):
        counts[status] += 1
    return counts


def worker_stats(*, platform: str, external_id: str, exclude_study: Study | None = None) -> dict[str, Any]:
    """One person's decided rewrites across studies: accepted, rejected, acceptance rate (0 with none decided)."""
    qs = RewriteReview.objects.filter(_person_q("response__participant__", platform, external_id))
    if exclude_study is not None:
        qs = qs.exclude(response__study=exclude_study)
    counts = _reviews(qs)
    decided = counts["accepted"] + counts["rejected"]
    return {"accepted": counts["accepted"], "rejected": counts["rejected"],
            "rate": counts["accepted"] / decided if decided else 0.0}


def worker_rates(*, study: Study | None = None) -> list[dict[str, Any]]:
    """Per-worker acceptance rates (all studies, or one), with whether the worker is blocked."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    responses = Response.objects.filter(study_item__kind=ItemKind.REWRITE, study__rewrite_settings__isnull=False)
    if study is not None:
        responses = responses.filter(study=study)
    for platform, external_id, status in responses.values_list(
            "participant__platform", "participant__external_id", "review__status"):
        row = rows.setdefault((platform, external_id), {"platform": platform, "participant": external_id,
                                                         "accepted": 0, "rejected": 0, "pending": 0})
        row[status or "pending"] += 1
    blocked = set(WorkerBlock.objects.values_list("platform", "external_id"))
    for key, row in rows.items():
        decided = row["accepted"] + row["rejected"]
        row["rate"] = round(row["accepted"] / decided, 3) if decided else None
        row["blocked"] = key in blocked
    return sorted(rows.values(), key=lambda r: (r["rate"] is None, r["rate"] or 0, r["participant"]))


# The queue's filters (besides one signal's name) and orders; `oldest`: the rewrites of blocked writers first, then
# oldest first (the order before writing signals existed).
QUEUE_FILTERS = {"": "all pending rewrites", "flagged": "flagged by any writing signal",
                 "unflagged": "not flagged by any signal", "no_telemetry": "no telemetry",
                 "inconsistent": "inconsistent telemetry"}
QUEUE_ORDERS = ("oldest", "flags")  # or "signal:<name>": that signal's score, most suspicious first


def review_queue_check(*, show: str = "", order: str = "oldest") -> None:
    if show not in QUEUE_FILTERS and show not in SPECS:
        raise ApplicationError(f"show must be one of {sorted(QUEUE_FILTERS)[1:]} or a signal {sorted(SPECS)}.",
                               details={"show": [str(show)[:40]]})
    if order not in QUEUE_ORDERS and order.removeprefix("signal:") not in SPECS:
        raise ApplicationError(f"order must be one of {QUEUE_ORDERS} or signal:NAME.",
                               details={"order": [str(order)[:40]]})


def review_queue(*, study: Study | None = None, limit: int = 200, show: str = "",
                 order: str = "oldest") -> list[dict[str, Any]]:
    """Pending rewrites (no decision yet) with their writing signals and telemetry status. `show` keeps those
    flagged by a signal (or by any, or none), without telemetry, or with inconsistent telemetry; `order` puts the
    most flagged first, or a signal's most suspicious scores first; by default the rewrites of blocked writers
    come first, then the oldest."""

    review_queue_check(show=show, order=order)
    qs = (Response.objects.filter(study_item__kind=ItemKind.REWRITE, study__rewrite_settings__isnull=False,
                                  is_valid=True)
          .filter(Q(review__isnull=True) | Q(review__status=RewriteReview.Status.PENDING))
          .select_related("study_item", "participant", "study", "review"))
    if study is not None:
        qs = qs.filter(study=study)
    flagged_ids = WritingSignal.objects.filter(flagged=True).values("response_id")
    if show == "flagged":
        qs = qs.filter(pk__in=flagged_ids)
    elif show == "unflagged":
        qs = qs.exclude(pk__in=flagged_ids)
    elif show == "no_telemetry":
        qs = qs.filter(telemetry_status=TelemetryStatus.NONE)
    elif show == "inconsistent":
        qs = qs.filter(telemetry_status=TelemetryStatus.INCONSISTENT)
    elif show in SPECS:
        qs = qs.filter(pk__in=flagged_ids.filter(signal=show))
    if order == "flags":
        qs = qs.annotate(n_flags=Count("writing_signals", filter=Q(writing_signals__flagged=True))).order_by(
            "-n_flags", "answered_at", "pk")
    elif order.startswith("signal:"):
        name = order.removeprefix("signal:")
        score = Max("writing_signals__score", filter=Q(writing_signals__signal=name))
        qs = qs.annotate(sort_score=score).order_by(
            F("sort_score").asc(nulls_last=True) if SPECS[name].flags_below else F("sort_score").desc(nulls_last=True),
            "answered_at", "pk")
    else:
        qs = qs.order_by("answered_at", "pk")
    responses = list(qs[:limit])
    signals = signals_of(response_ids=[r.pk for r in responses])
    rows = [{"response": r.pk, "study": r.study.slug, "source_id": r.study_item.external_id,
             "source": r.study_item.payload.get("source", ""), "rewrite": r.answer,
             "target_style": r.study_item.payload.get("target_style", ""),
             "participant": f"{r.participant.platform}:{r.participant.external_id}",
             "flagged": bool(getattr(r, "review", None) and r.review.flagged),
             "telemetry": r.telemetry_status, "signals": signals.get(r.pk, []),
             "signal_flags": sum(s["flagged"] for s in signals.get(r.pk, []))} for r in responses]
    return sorted(rows, key=lambda row: not row["flagged"]) if order == "oldest" else rows


def review_autoflag(*, study: Study, language_model: str | None = None, near_duplicate_method: str = "chars",
                    embedding_model: str | None = None, model_rewriter: Any = None, model_name: str = "the model",
                    progress: Any = None) -> dict[str, Any]:
    """Measure the study's writing signals (the flags the queue shows) and apply the researcher's rule: a pending
    rewrite flagged by a signal in `RewriteSettings.signal_auto_reject` is rejected as "other", the evidence as
    the note the writer is shown, through `review_decide` (its slot reopens). Without a rule nothing is rejected:
    signals are evidence for a reviewer, not a verdict."""

    summary = writing_signals_compute(study=study, language_model=language_model,
                                      near_duplicate_method=near_duplicate_method, embedding_model=embedding_model,
                                      model_rewriter=model_rewriter, model_name=model_name, progress=progress)
    rule = RewriteSettings.objects.filter(study=study).values_list("signal_auto_reject", flat=True).first() or []
    rejected = 0
    if rule:
        evidence: dict[int, list[str]] = defaultdict(list)
        pending = (WritingSignal.objects.filter(response__study=study, flagged=True, signal__in=rule,
                                                response__is_valid=True)
                   .filter(Q(response__review__isnull=True) | Q(response__review__status=RewriteReview.Status.PENDING))
                   .order_by("response_id", "signal"))
        for response_id, text in pending.values_list("response_id", "evidence"):
            evidence[response_id].append(text)
        for response_id, texts in evidence.items():
            note = "Rejected by the study's rule on writing signals: " + "; ".join(texts)
            review_decide(response_id=response_id, decision="reject", reviewer=None, reason=RejectionReason.OTHER,
                          reason_text=note[:500])
            rejected += 1
    return {**summary, "auto_reject": list(rule), "auto_rejected": rejected}


def review_decide(*, response_id: int, decision: str, reviewer: Any, reason: str = "",
                  reason_text: str = "", study: Study | None = None) -> RewriteReview:
    """Accept or reject one pending rewrite (of `study`, when given). A rejection needs a reason ("other" also a
    text); it invalidates the rewrite and releases its reservation, which reopens the source's slot for another
    worker."""
    if decision not in DECISIONS:
        raise ApplicationError(f"decision must be one of {DECISIONS}.", details={"decision": [str(decision)[:16]]})
    reason_text = (reason_text or "").strip()[:500]
    if decision == "reject":
        if reason not in RejectionReason.values:
            raise ApplicationError(f"a rejection needs a reason, one of {RejectionReason.values}.",
                                   details={"reason": [str(reason)[:16]]})
        if reason == RejectionReason.OTHER and not reason_text:
            raise ApplicationError("reason 'other' needs a text.", details={"reason_text": ["required"]})
    with transaction.atomic():
        rows = Response.objects.filter(pk=response_id, study_item__kind=ItemKind.REWRITE)
        if study is not None:
            rows = rows.filter(study=study)
        response = rows.select_for_update(of=("self",)).select_related("study_item", "study").first()
        if response is None:
            raise ApplicationError(f"rewrite {response_id} not found.", code=NOT_FOUND, status=404)
        review, _ = RewriteReview.objects.get_or_create(response=response)
        if review.status != RewriteReview.Status.PENDING:
            raise ApplicationError(f"rewrite {response_id} was already {review.status} by another reviewer.",
                                   code=CONFLICT, status=409)
        if not response.is_valid:
            raise ApplicationError(f"rewrite {response_id} is no longer valid (its writer was excluded).",
                                   code=CONFLICT, status=409)
        now = timezone.now()
        review.status = RewriteReview.Status.ACCEPTED if decision == "accept" else RewriteReview.Status.REJECTED
        review.reason = reason if decision == "reject" else ""
        review.reason_text = reason_text
        review.reviewer = reviewer
        review.decided_at = now
        review.save()
        if decision == "reject":
            Response.objects.filter(pk=response.pk).update(is_valid=False)
            reservations_release(Reservation.objects.filter(pk=response.reservation_id, released=False), now=now)
    return review


# The automatic review (scripted pipelines and the demo; a person reviews real studies in the queue): a rewrite that
# keeps too little of its source's words has changed its meaning.
AUTO_REVIEW_MIN_OVERLAP = 60.0


def rewrite_keeps_meaning(*, source: str, rewrite: str, min_overlap: float = AUTO_REVIEW_MIN_OVERLAP) -> bool:
    """The auto-review rule: rapidfuzz token_sort_ratio of rewrite and source (lower-cased) at least `min_overlap`
    (0-100)."""
    # heavy: rapidfuzz loads only when edit distances are computed
    from rapidfuzz import fuzz

    return fuzz.token_sort_ratio(source.lower(), rewrite.lower()) >= min_overlap


def reviews_decide_pending(*, study: Study, auto: bool, min_overlap: float = AUTO_REVIEW_MIN_OVERLAP,
                           reviewer: Any = None, progress: Any = None) -> dict[str, int]:
    """Decide every pending rewrite of `study` through `review_decide`: with `auto`, reject as "meaning changed" the
    rewrites that fail `rewrite_keeps_meaning` and accept the rest; without it, accept them all. Rejected rewrites
    reopen their slots. `progress(done, total)` is called after each."""
    if not 0 <= min_overlap <= 100:
        raise ApplicationError(f"Min overlap must be within 0…100, not {min_overlap}.", field="min_overlap")
    counts = {"accepted": 0, "rejected": 0}
    rows = review_queue(study=study, limit=100_000)
    for done, row in enumerate(rows, start=1):
        if auto and not rewrite_keeps_meaning(source=row["source"], rewrite=row["rewrite"], min_overlap=min_overlap):
            review_decide(response_id=row["response"], decision="reject", reviewer=reviewer,
                          reason=RejectionReason.MEANING)
            counts["rejected"] += 1
        else:
            review_decide(response_id=row["response"], decision="accept", reviewer=reviewer)
            counts["accepted"] += 1
        if progress is not None:
            progress(done, len(rows))
    return {"reviewed": len(rows), **counts}


def worker_block(*, platform: str, external_id: str, reason: str, blocked_by: Any) -> dict[str, Any]:
    """Block a person (every study): later sessions are refused, their pending rewrites flagged for review."""
    if not Participant.objects.filter(platform=platform, external_id=external_id).exists():
        raise ApplicationError(f"no worker {platform}:{external_id}.", code=NOT_FOUND, status=404)
    with transaction.atomic():
        WorkerBlock.objects.get_or_create(platform=platform, external_id=external_id,
                                          defaults={"reason": reason[:500], "blocked_by": blocked_by})
        pending = Response.objects.filter(_person_q("participant__", platform, external_id),
                                          study_item__kind=ItemKind.REWRITE, is_valid=True)
        RewriteReview.objects.bulk_create([RewriteReview(response=r) for r in pending.filter(review__isnull=True)])
        flagged = RewriteReview.objects.filter(response__in=pending, status=RewriteReview.Status.PENDING).update(
            flagged=True)
    return {"blocked": f"{platform}:{external_id}", "pending_flagged": flagged}


def review_feedback(*, batch: Batch) -> list[dict[str, Any]]:
    """The reasons of the worker's rejected rewrites, shown on their next visit: rejections not shown before, and
    those first shown during this batch (so a reload shows them again). Marks the new ones shown."""
    participant = batch.participant
    qs = RewriteReview.objects.filter(_person_q("response__participant__", participant.platform,
                                                participant.external_id), status=RewriteReview.Status.REJECTED)
    qs = qs.filter(Q(shown_to_worker_at__isnull=True) | Q(shown_to_worker_at__gte=batch.created_at))
    rows = list(qs.select_related("response__study_item").order_by("decided_at"))
    if not rows:
        return []
    RewriteReview.objects.filter(pk__in=[r.pk for r in rows], shown_to_worker_at__isnull=True).update(
        shown_to_worker_at=timezone.now())
    return [{"source": r.response.study_item.payload.get("source", ""), "rewrite": r.response.answer,
             "reason": r.reason, "reason_label": RejectionReason(r.reason).label, "note": r.reason_text}
            for r in rows]


def review_recommendations(*, study: Study, recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Payment decisions of a reviewed rewrite study: a blocked worker, or one whose decided rewrites were all
    rejected, is rejected with the reviewers' reasons; a worker with accepted rewrites is approved."""
    if not RewriteSettings.objects.filter(study=study).exists():
        return recs
    by_participant: dict[str, list[RewriteReview]] = defaultdict(list)
    for review in RewriteReview.objects.filter(response__study=study).select_related("response__participant"):
        by_participant[review.response.participant.external_id].append(review)
    blocked = set(WorkerBlock.objects.values_list("platform", "external_id"))
    out = []
    for rec in recs:
        reviews = by_participant.get(rec["participant"], [])
        accepted = sum(r.status == "accepted" for r in reviews)
        rejected = [r for r in reviews if r.status == "rejected"]
        reasons = sorted({RejectionReason(r.reason).label for r in rejected})
        rec = dict(rec)
        if (rec["platform"], rec["participant"]) in blocked or (rejected and not accepted):
            rec["recommendation"] = "reject"
            rec["rejection_category"] = "LOW_EFFORT"
            rec["rejection_note"] = "Reviewers rejected your rewrites for the reasons given; see the instructions."
            rec["evidence"] = [f"had {len(rejected)} of {len(reviews)} rewrites rejected ({', '.join(reasons)})"]
        elif accepted:
            rec["recommendation"] = "approve"
            rec["evidence"] = [f"had {accepted} of {len(reviews)} rewrites accepted"]
        out.append(rec)
    return out
