"""Reads of the annotation app: session views for participants, study progress, recommendations, export rows."""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Max, Min, Q
from django.db.models.functions import Coalesce

from annotation.models import (
    Batch,
    ConsentVersion,
    Participant,
    Reservation,
    Response,
    Study,
    StudyItem,
    displayed_answer,
)

SPEEDER_RATIO = 0.33  # median seconds per item below a third of the study's median: flagged as a speeder
SPEEDER_MIN_ANSWERS = 5


# --- participant side ---------------------------------------------------------------------------------


def batch_progress(batch: Batch) -> dict[str, int]:
    if batch.state in (Batch.State.CONSENT, Batch.State.ELIGIBILITY, Batch.State.INSTRUCTIONS) or (
        batch.state == Batch.State.SCREENED_OUT and not batch.n_items
    ):
        return {"done": 0, "total": 0}  # nothing reserved before the items start: no query
    if getattr(batch, "started_now", False):
        return {"done": 0, "total": batch.n_items}  # this request reserved the items
    counts = Reservation.objects.filter(batch=batch).aggregate(
        total=Count("id"), done=Count("id", filter=Q(answered_at__isnull=False))
    )
    return {"done": counts["done"], "total": counts["total"]}


def reservation_expected_answer(*, public_id: str) -> str | None:
    """The correct answer as the participant sees the item (server-side only: simulations and tests)."""
    reservation = Reservation.objects.select_related("study_item", "screening_question", "batch__study").get(
        public_id=public_id
    )
    return _expected(reservation)


def _expected(reservation: Reservation) -> str | None:
    if reservation.screening_question_id:
        correct = reservation.screening_question.correct_answer_for(reservation.batch.study.item_kind)
    else:
        correct = reservation.study_item.correct_answer
    return displayed_answer(shown=reservation.shown, canonical=correct) if correct else None


def reservation_is_screening(*, public_id: str) -> bool:
    return Reservation.objects.filter(public_id=public_id, screening_question__isnull=False).exists()


def batch_answer_key(*, token: str) -> dict[str, dict[str, Any]]:
    """public id → {expected (displayed), screening, published_votes}: one query, for the crowd simulator."""
    rows = Reservation.objects.filter(batch__token=token).select_related(
        "study_item__instance", "screening_question", "batch__study"
    )
    return {
        r.public_id: {
            "expected": _expected(r),
            "screening": r.screening_question_id is not None,
            "published_votes": getattr(getattr(r.study_item, "instance", None), "published_votes", None),
            "external_id": r.study_item.external_id if r.study_item_id else None,
        }
        for r in rows
    }


# --- researcher side ----------------------------------------------------------------------------------


def study_consent_versions(*, study: Study) -> list[dict[str, Any]]:
    """The consent versions participants of `study` agreed to, oldest first: sha256, text, when first stored, and
    how many participants and sessions agreed to each (one query)."""
    rows = (ConsentVersion.objects.filter(batches__study=study)
            .annotate(participants=Count("batches__participant", distinct=True), sessions=Count("batches"))
            .order_by("created_at", "pk"))
    return [{"sha256": v.sha256, "text": v.text, "created_at": v.created_at, "participants": v.participants,
             "sessions": v.sessions} for v in rows]


def study_progress(*, study: Study) -> dict[str, Any]:
    k = study.annotators_per_item
    items = StudyItem.objects.filter(study=study).annotate(
        # distinct people, so a Likert item's several question rows count once (imported rows have no batch)
        n_valid=Count("responses__participant", filter=Q(responses__is_valid=True), distinct=True)
    )
    n_items = items.count()
    complete = items.filter(Q(n_valid__gte=k) | Q(is_closed=True)).count()
    responses = Response.objects.filter(study=study)
    participants = Participant.objects.filter(study=study)
    pay = study_pay(study=study)
    return {
        "slug": study.slug,
        "item_kind": study.item_kind,
        "annotators_per_item": k,
        "items": n_items,
        "items_complete": complete,
        "items_closed_early": items.filter(is_closed=True).count(),
        "responses": responses.count(),
        "valid_responses": responses.filter(is_valid=True).count(),
        "participants": participants.count(),
        "screened_out": participants.filter(screened_out=True).count(),
        "excluded": participants.filter(excluded=True).count(),
        "batches_completed": pay["batches_completed"],
        "median_minutes_per_batch": pay["median_minutes_per_batch"],
        "effective_hourly_pay": pay["effective_hourly_pay"],
        "target_hourly_pay": pay["target_hourly_pay"],
        "adaptive": study_adaptive_savings(study=study) if study.adaptive_stopping else None,
        "participation": study_participation(study=study),
    }


def study_adaptive_savings(*, study: Study) -> dict[str, int]:
    """Annotations adaptive collection saved: k minus the valid responses of every closed item."""
    closed = StudyItem.objects.filter(study=study, is_closed=True).annotate(
        n=Count("responses", filter=Q(responses__is_valid=True, responses__is_screening=False))
    )
    k = study.annotators_per_item
    saved = sum(max(k - n, 0) for n in closed.values_list("n", flat=True))
    return {"closed_items": closed.count(), "annotations_saved": saved}


def study_pay(*, study: Study) -> dict[str, Any]:
    """What a completed batch paid per hour: the reward per batch (target hourly pay × estimated minutes) over the
    median time a completed batch took on the server's clock (started → finished). One definition for the study's
    progress page and the dataset card."""
    durations = [(finished - started).total_seconds() / 60 for started, finished in Batch.objects.filter(
        study=study, state=Batch.State.COMPLETED, started_at__isnull=False, finished_at__isnull=False,
    ).values_list("started_at", "finished_at")]
    median_minutes = statistics.median(durations) if durations else None
    reward = Decimal(str(study.target_hourly_pay)) * Decimal(study.estimated_minutes) / 60  # per batch, at target
    effective = float(reward) / (median_minutes / 60) if median_minutes else None
    return {
        "batches_completed": len(durations),
        "median_minutes_per_batch": round(median_minutes, 2) if median_minutes is not None else None,
        "reward_per_batch": round(float(reward), 2),
        "effective_hourly_pay": round(effective, 2) if effective is not None else None,
        "target_hourly_pay": float(study.target_hourly_pay),
        "estimated_minutes": study.estimated_minutes,
    }


def grace_seconds(study: Study) -> int:
    value = study.first_answer_grace_seconds
    return int(settings.ANNOTATION_FIRST_ANSWER_GRACE_SECONDS if value is None else value)


def study_participation(*, study: Study) -> dict[str, Any]:
    """Who may take part and how much room one arrival may take (the study's settings, defaults resolved)."""
    return {
        "platform": study.platform, "prolific_study_id": study.prolific_study_id,
        "allow_anonymous": study.allow_anonymous, "first_answer_grace_seconds": grace_seconds(study),
        "max_open_batches": study.max_open_batches, "min_seconds_per_item": study.min_seconds_per_item,
    }


def _median_seconds(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _recommendation(participant: Participant, *, failed: list[dict[str, Any]], checks: int, answered: int,
                    batches: dict[str, Any], evidence: list[str]) -> str:
    """Approve / return / reject for one participant (the rule `participant_recommendations` describes); the
    evidence for it is appended to `evidence`."""
    if participant.screened_out:
        evidence.append(f"screened out: {participant.exclusion_reason or 'eligibility'}")
        return "return"
    if len(failed) >= 2:
        evidence.append(f"failed {len(failed)} of {checks} attention checks")
        return "reject"
    if answered == 0:
        # Nothing to pay for and nothing to reject: no decision (ask for a return).
        if batches.get("declined"):
            evidence.append("declined consent")
        elif batches.get("expired"):
            evidence.append("timed out without answering")
        else:
            evidence.append("no answers")
        return "return"
    if failed:
        evidence.append("failed 1 attention check: data excluded, payment approved (one failure is no "
                        "ground for rejection)")
    return "approve"


def participant_recommendations(*, study: Study) -> list[dict[str, Any]]:
    """Approve / return / reject with evidence, following Prolific's guidance on attention and comprehension
    checks: excluding data is not refusing payment. A participant with no answers (declined, timed out, left) gets
    no decision: "return", never "approve". One failed attention check excludes the data but is no
    ground for rejection; a rejection needs at least two failed checks; a screener or a comprehension check
    failed twice asks the participant to return the study; speeders are flagged for the researcher to review."""
    seconds_by_participant: dict[int, list[float]] = defaultdict(list)
    failed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    answered: dict[int, int] = defaultdict(int)
    checks: dict[int, int] = defaultdict(int)
    # Speed on the server's clock (served → answered); the client's `seconds` only for imported rows without it.
    for pid, is_screening, is_correct, seconds, answer, sq_name, shown, at in Response.objects.filter(
        study=study
    ).values_list("participant_id", "is_screening", "is_correct", Coalesce("server_seconds", "seconds"), "answer",
                  "screening_question__name", "shown", "answered_at"):
        answered[pid] += 1
        if seconds is not None and not is_screening:
            seconds_by_participant[pid].append(seconds)
        if is_screening:
            checks[pid] += 1
            if is_correct is False:
                failed[pid].append({"question": sq_name, "answer": answer, "texts": shown.get("texts"),
                                    "answered_at": at.isoformat()})
    medians = {pid: _median_seconds(v) for pid, v in seconds_by_participant.items()}
    study_median = _median_seconds([m for m in medians.values() if m is not None])
    batch_info = {
        row["participant_id"]: row
        for row in Batch.objects.filter(study=study).values("participant_id").annotate(
            n=Count("id"), expired=Count("id", filter=Q(state=Batch.State.EXPIRED)),
            declined=Count("id", filter=Q(state=Batch.State.DECLINED)),
            first=Min("created_at"), last=Max("finished_at"),
        )
    }
    refs: dict[int, dict[str, list[str]]] = defaultdict(lambda: {"session": [], "assignment": [], "hit": []})
    for pid, session_ref, assignment, hit in Batch.objects.filter(study=study).order_by("number").values_list(
        "participant_id", "session_ref", "assignment", "hit"
    ):
        refs[pid]["session"].append(session_ref)
        refs[pid]["assignment"].append(assignment)
        refs[pid]["hit"].append(hit)
    out = []
    for participant in Participant.objects.filter(study=study).order_by("created_at"):
        pid = participant.pk
        evidence: list[str] = []
        median = medians.get(pid)
        enough = median is not None and len(seconds_by_participant[pid]) >= SPEEDER_MIN_ANSWERS
        relative_speeder = bool(enough and study_median and median < SPEEDER_RATIO * study_median)
        # Absolute: below the study's minimum seconds per item, however fast everyone else is (a bot farm).
        absolute_speeder = bool(median is not None and study.min_seconds_per_item
                                and median < study.min_seconds_per_item)
        speeder = relative_speeder or absolute_speeder
        recommendation = _recommendation(participant, failed=failed[pid], checks=checks[pid],
                                         answered=answered[pid], batches=batch_info.get(pid, {}), evidence=evidence)
        if absolute_speeder:
            evidence.append(f"speeder: median {median:.1f} s per item (server-measured) is below the study's "
                            f"minimum of {study.min_seconds_per_item:g} s")
        if relative_speeder:
            evidence.append(f"speeder: median {median:.1f} s per item vs study median {study_median:.1f} s")
        out.append({
            "participant": participant.external_id,
            "platform": participant.platform,
            "screened_out": participant.screened_out,
            "excluded": participant.excluded,
            "exclusion_reason": participant.exclusion_reason,
            "answers": answered[pid],
            "attention_checks": checks[pid],
            "failed_checks": failed[pid],
            "median_seconds": round(median, 2) if median is not None else None,
            "speeder": speeder,
            "batches": batch_info.get(pid, {}).get("n", 0),
            "submissions": [ref for ref in refs[pid]["session"] if ref],
            "assignments": [
                {"assignment": assignment, "hit": hit}
                for assignment, hit in zip(refs[pid]["assignment"], refs[pid]["hit"], strict=True) if assignment
            ],
            "recommendation": recommendation,
            "evidence": evidence,
        })
    return out


EXPORT_COLUMNS = [
    "study", "instance_id", "participant", "platform", "question", "answer", "value", "correct", "is_screening",
    "is_valid", "participant_excluded", "answered_at", "seconds", "server_seconds", "batch", "position", "shown",
]


def response_export_rows(*, study: Study) -> Iterator[dict[str, Any]]:
    qs = (
        Response.objects.filter(study=study)
        .order_by("answered_at", "id")
        .values_list("study_item__external_id", "screening_question__name", "participant__external_id",
                     "participant__platform", "question", "answer", "value", "is_correct", "is_screening",
                     "is_valid", "participant__excluded", "answered_at", "seconds", "server_seconds", "batch_number",
                     "reservation__position", "shown")
    )
    for (item_id, sq, pid, platform, question, answer, value, correct, screening, valid, excluded, at, seconds,
         server_seconds, batch, position, shown) in qs.iterator(chunk_size=2000):
        yield {
            "study": study.slug, "instance_id": item_id or sq, "participant": pid, "platform": platform,
            "question": question, "answer": answer, "value": value, "correct": correct, "is_screening": screening,
            "is_valid": valid, "participant_excluded": excluded, "answered_at": at.isoformat(), "seconds": seconds,
            "server_seconds": server_seconds, "batch": batch, "position": position, "shown": shown,
        }


def items_over_capacity(*, study: Study | None = None) -> list[tuple[int, int]]:
    """(item id, valid responses) of items with more than k valid (distinct-reservation) responses: must be []."""
    qs = StudyItem.objects.all() if study is None else StudyItem.objects.filter(study=study)
    qs = qs.annotate(
        n=Count("responses__participant", filter=Q(responses__is_valid=True), distinct=True)
    ).filter(n__gt=F("study__annotators_per_item"))
    return list(qs.values_list("pk", "n"))


def study_language(study: Study) -> str:
    """The BCP 47 language of a study's texts: `Study.language` (set at creation from the researcher, the corpus or
    the items), else its items' corpus's (a study stored before studies carried a language), else English."""
    if study.language:
        return str(study.language)
    corpus = (StudyItem.objects.filter(study=study, instance__isnull=False)
              .values_list("instance__corpus__language", flat=True).first())
    return str(corpus) if corpus else "en"
