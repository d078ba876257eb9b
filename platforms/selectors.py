"""Reads of the platforms app: what a study cost in bonuses (for the admin, the API and the dataset card), and its
platform side for the study's overview page."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, Sum

from annotation.models import Participant, Study
from core.pseudonyms import is_pseudonym
from platforms.backends import backend_class, people_platform
from platforms.backends.base import Arrival
from platforms.models import (
    BonusPayment,
    CallState,
    Decision,
    PlatformMessage,
    PlatformStudy,
    PlatformSubmission,
)


def link_arrivals(*, platform_study: PlatformStudy) -> list[Arrival]:
    """Who came to the study through the platform's link, for a platform that cannot see them itself (the mock):
    every participant of the study who entered as the platform's people do (the mock's: by the anonymous link), raw
    ids only (a pseudonymised one can no longer be named)."""
    rows = Participant.objects.filter(study=platform_study.study, platform=people_platform(platform_study.platform))
    return [Arrival(worker_id=external_id, arrived_at=created_at)
            for external_id, created_at in rows.order_by("created_at").values_list("external_id", "created_at")
            if not is_pseudonym(external_id)]


def study_bonus_totals(*, study: Study) -> dict[str, Any] | None:
    """Bonus totals of a study run through a platform account: paid, owed (pending or being paid), unknown (maybe
    paid: a person must check), per-participant figures; None for a study with no platform side."""
    platform_study = PlatformStudy.objects.filter(study=study).first()
    if platform_study is None:
        return None
    by_state = {state: (n, total or Decimal(0)) for state, n, total in
                BonusPayment.objects.filter(platform_study=platform_study).values_list("state")
                .annotate(n=Count("id"), total=Sum("amount"))}

    def amount(*states: str) -> Decimal:
        return sum((by_state.get(s, (0, Decimal(0)))[1] for s in states), Decimal(0))

    paid_people = (BonusPayment.objects.filter(platform_study=platform_study, state=BonusPayment.State.PAID)
                   .values("worker_id").annotate(total=Sum("amount")).order_by())
    totals = sorted(row["total"] for row in paid_people)
    median = None
    if totals:
        mid = len(totals) // 2
        median = totals[mid] if len(totals) % 2 else (totals[mid - 1] + totals[mid]) / 2
    return {
        "platform": platform_study.platform, "currency": platform_study.currency,
        "paid": amount(BonusPayment.State.PAID), "pending": amount(BonusPayment.State.PENDING,
                                                                   BonusPayment.State.CLAIMED),
        "unknown": amount(BonusPayment.State.UNKNOWN), "participants": len(totals),
        "median_per_participant": median, "rows": sum(n for n, _ in by_state.values()),
    }


def study_platform_overview(*, study: Study) -> dict[str, Any] | None:
    """A study's platform side for its overview page: state, places × reward, the platform's estimated fee, bonuses
    paid / owed / unknown, unknown outcomes of decisions and messages, people who returned or timed out, the
    platform's hourly floor; None for a study with no platform side. Six queries."""
    platform_study = PlatformStudy.objects.filter(study=study).select_related("account").first()
    if platform_study is None:
        return None
    backend = backend_class(platform_study.platform)
    bonuses = study_bonus_totals(study=study) or {}
    decisions = Decision.objects.filter(platform_study=platform_study).aggregate(
        sent=Count("id", filter=~Q(state__in=(CallState.PENDING, CallState.FAILED))),
        unknown=Count("id", filter=Q(state=CallState.UNKNOWN)))
    messages_unknown = PlatformMessage.objects.filter(platform_study=platform_study, state=CallState.UNKNOWN).count()
    left = PlatformSubmission.objects.filter(platform_study=platform_study, status__in=backend.LEFT).count()
    rewards = Decimal(platform_study.places * platform_study.reward_cents) / 100
    bonus_total = sum((bonuses.get(k, Decimal(0)) for k in ("paid", "pending", "unknown")), Decimal(0))
    floors = getattr(settings, backend.HOURLY_FLOORS, {}) if backend.HOURLY_FLOORS else {}
    floor = floors.get(platform_study.currency)
    return {
        "platform_study": platform_study, "currency": platform_study.currency, "places": platform_study.places,
        "reward": Decimal(platform_study.reward_cents) / 100, "rewards": rewards,
        "fee_rate": backend.FEE_RATE, "fee": ((rewards + bonus_total) * backend.FEE_RATE).quantize(Decimal("0.01")),
        "bonuses": bonuses, "decisions_sent": decisions["sent"], "decisions_unknown": decisions["unknown"],
        "messages_unknown": messages_unknown, "left": left,
        "hourly_floor": Decimal(str(floor)) if floor is not None else None,
    }


def study_recruitment_language(*, study: Study) -> dict[str, Any] | None:
    """How the study's platform draft recruited by language ({platform, language, language_name, kind, filter, note});
    None for a study with no platform draft."""
    platform_study = PlatformStudy.objects.filter(study=study).exclude(recruitment_language={}).first()
    if platform_study is None:
        return None
    return {"platform": platform_study.account.platform, **platform_study.recruitment_language}
