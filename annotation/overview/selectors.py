"""The reads behind a study's overview page (admin › study › Overview) and the admin home's studies in progress:
answers stored of planned, items at k, participants by state, arrivals over time, pay per hour, and the warnings
annotation itself can tell (implausible pay, sessions that mostly expire, jobs no worker serves). A fixed number of
queries whatever the study's size (pinned in tests/annotation/overview/test_selectors.py)."""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from django.conf import settings
from django.db.models import Count, IntegerField, Max, Min, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Least, Trunc
from django.urls import reverse

from annotation.models import Batch, Participant, Response, Study, StudyItem
from annotation.overview.sections import Notice
from annotation.selectors import grace_seconds, study_pay
from core.job_waiting import job_waiting
from core.models import Job

# Effective pay above this many times the target: completed sessions were far faster than estimated (bots, a study
# that ends early, or an estimate far too long); the figure is shown with a warning, never as a plain number.
IMPLAUSIBLE_PAY_FACTOR = 3
# Most sessions expiring: the first-answer grace or the time limit is too short for the study's people.
EXPIRED_SHARE = 0.5
EXPIRED_MIN_SESSIONS = 3
ARRIVAL_BUCKETS_MAX = 48


def _items(study: Study) -> dict[str, int]:
    k = study.annotators_per_item
    per_item = StudyItem.objects.filter(study=study).annotate(n_valid=Count(
        "responses__participant", filter=Q(responses__is_valid=True, responses__is_screening=False), distinct=True))
    totals = per_item.aggregate(
        items=Count("id"), at_k=Count("id", filter=Q(n_valid__gte=k)),
        closed_early=Count("id", filter=Q(is_closed=True, n_valid__lt=k)),
        stored=Coalesce(Sum(Least("n_valid", Value(k))), 0))
    return {"items": totals["items"], "items_at_k": totals["at_k"], "items_closed_early": totals["closed_early"],
            "answers_stored": totals["stored"], "answers_planned": totals["items"] * k}


def _people(study: Study) -> dict[str, Any]:
    def count(condition: Q | None = None) -> Count:
        return Count("id", distinct=True, filter=condition)

    return Participant.objects.filter(study=study).aggregate(
        arrived=count(), consented=count(Q(batches__consented_at__isnull=False)),
        finished=count(Q(batches__state=Batch.State.COMPLETED)), excluded=count(Q(excluded=True)),
        screened_out=count(Q(screened_out=True)), first=Min("created_at"), last=Max("created_at"))


def _arrivals(study: Study, first: dt.datetime | None, last: dt.datetime | None) -> dict[str, Any]:
    """Participants' arrivals per hour (a study that ran up to three days) or per day, oldest first."""
    if first is None or last is None:
        return {"unit": "hour", "buckets": []}
    unit = "hour" if last - first <= dt.timedelta(days=3) else "day"
    rows = (Participant.objects.filter(study=study).annotate(bucket=Trunc("created_at", unit))
            .values("bucket").annotate(n=Count("id")).order_by("bucket"))
    buckets = [(row["bucket"], row["n"]) for row in rows]
    return {"unit": unit, "buckets": buckets[-ARRIVAL_BUCKETS_MAX:] if unit == "day" else buckets}


def _batches(study: Study) -> dict[str, int]:
    return dict(Batch.objects.filter(study=study).values_list("state").annotate(n=Count("id")).order_by())


def _pay_notice(pay: dict[str, Any]) -> Notice | None:
    effective, target = pay["effective_hourly_pay"], pay["target_hourly_pay"]
    if effective is None or not target or effective <= IMPLAUSIBLE_PAY_FACTOR * target:
        return None
    currency = settings.STYLECROWD_PAY_CURRENCY
    return Notice(f"Effective hourly pay {effective:.2f} {currency} is implausible: more than "
                  f"{IMPLAUSIBLE_PAY_FACTOR}× the target of {target:.2f} {currency}, because completed sessions took a "
                  f"median of {pay['median_minutes_per_batch']} minutes against the {pay['estimated_minutes']} "
                  "estimated. Check for automated or simulated sessions, and whether the estimate (and so the "
                  "reward) is right.")


def _expiry_notice(study: Study, batches: dict[str, int]) -> Notice | None:
    expired = batches.get(Batch.State.EXPIRED, 0)
    ended = expired + batches.get(Batch.State.COMPLETED, 0)
    if ended < EXPIRED_MIN_SESSIONS or expired / ended <= EXPIRED_SHARE:
        return None
    return Notice(f"{expired} of {ended} ended sessions expired: the first-answer grace ({grace_seconds(study)} s) "
                  f"or the time limit ({study.batch_time_limit_minutes} minutes per batch) is too short for most "
                  "participants. Lengthen them in the study's settings.")


def _job_notices(study: Study) -> list[Notice]:
    """Jobs for this study that no worker has taken (core/job_waiting.py says why, and the command that serves it)."""
    jobs = Job.objects.filter(Q(params__study=study.slug) | Q(params__study_slug=study.slug),
                              status=Job.Status.CREATED).order_by("created_at")[:10]
    notices = []
    for job in jobs:
        waiting = job_waiting(job)
        if waiting is not None:
            notices.append(Notice(f"Job #{job.pk}: {waiting['text']}",
                                  url=reverse("admin:core_job_change", args=[job.pk]), link=f"job #{job.pk}"))
    return notices


def study_overview(*, study: Study) -> dict[str, Any]:
    """Everything the overview page shows that annotation knows (the sections above it add theirs)."""
    items = _items(study)
    people = _people(study)
    batches = _batches(study)
    pay = study_pay(study=study)
    pay_notice = _pay_notice(pay)
    warnings = [n for n in (pay_notice, _expiry_notice(study, batches)) if n is not None]
    return {
        **items,
        "people": {key: people[key] for key in ("arrived", "consented", "finished", "excluded", "screened_out")},
        "batches": batches,
        "arrivals": _arrivals(study, people["first"], people["last"]),
        "pay": pay,
        "pay_implausible": pay_notice is not None,
        "warnings": [*warnings, *_job_notices(study)],
    }


def studies_in_progress(*, limit: int = 20) -> list[dict[str, Any]]:
    """Open studies, then drafts, newest first, each with its answers stored of planned counted as on its overview
    (one person's valid answers to an item count once, up to k). Two queries."""
    n_items = StudyItem.objects.filter(study=OuterRef("pk")).values("study").annotate(n=Count("id")).values("n")[:1]
    studies = list(Study.objects.filter(status__in=(Study.Status.ACTIVE, Study.Status.DRAFT))
                   .annotate(n_items=Coalesce(Subquery(n_items, output_field=IntegerField()), 0))
                   .order_by("status", "-created_at")[:limit])  # active before draft
    stored: dict[int, int] = defaultdict(int)
    k = {study.pk: study.annotators_per_item for study in studies}
    per_item = (Response.objects.filter(study__in=list(k), is_valid=True, is_screening=False, study_item__isnull=False)
                .values_list("study_id", "study_item_id").annotate(n=Count("participant", distinct=True)).order_by())
    for study_id, _, n in per_item:
        stored[study_id] += min(n, k[study_id])
    return [{"study": s, "planned": s.n_items * s.annotators_per_item, "stored": stored[s.pk]} for s in studies]
