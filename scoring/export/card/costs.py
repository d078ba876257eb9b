"""What participants were paid: the one place the dataset card reads pay from.

The hourly rate comes from annotation's data (the reward per batch over the median time a completed batch took on the
server's clock); bonuses from the platform ledger of the `platforms` app (it sits above annotation, below scoring,
so scoring reads it).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings

from annotation.models import Study
from annotation.selectors import study_pay
from platforms.selectors import study_bonus_totals


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def study_bonus_facts(study: Study) -> dict[str, Any] | None:
    """The study's bonus totals from the platform ledger (paid, owed, outcome unknown); None for a study not run
    through a platform account (its bonuses, if any, were paid outside StyleCrowd)."""
    totals = study_bonus_totals(study=study)
    return None if totals is None else {key: _plain(value) for key, value in totals.items()}


def study_cost_facts(study: Study) -> dict[str, Any]:
    """Pay facts of one study for the card: currency, target and median effective hourly rate, reward per batch,
    bonus totals where the platform ledger exists (paid, pending, unknown, participants)."""
    pay = study_pay(study=study)
    return {
        "currency": settings.STYLECROWD_PAY_CURRENCY,
        "target_hourly_pay": pay["target_hourly_pay"],
        "estimated_minutes_per_batch": pay["estimated_minutes"],
        "reward_per_batch": pay["reward_per_batch"],
        "batches_completed": pay["batches_completed"],
        "median_minutes_per_batch": pay["median_minutes_per_batch"],
        "median_effective_hourly_pay": pay["effective_hourly_pay"],
        "bonuses": study_bonus_facts(study),
    }
