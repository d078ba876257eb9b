"""Reads of the platforms app: what a study cost in bonuses (for the admin, the API and the dataset card)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum

from annotation.models import Participant, Study
from core.pseudonyms import is_pseudonym
from platforms.backends import people_platform
from platforms.backends.base import Arrival
from platforms.models import BonusPayment, PlatformStudy


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
