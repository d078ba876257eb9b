"""Prolific's rules for what a study may be, applied before anything is sent: its reward floor, its floor for the
maximum time, and the shapes its API description accepts (description paragraphs, range filters). No network, no
database: `platforms.backends.prolific` builds its calls with them."""
from __future__ import annotations

import html
import math
from decimal import Decimal
from typing import Any

from django.conf import settings

from core.errors import ApplicationError
from platforms.backends.base import money
from platforms.error_codes import REWARD_BELOW_MINIMUM


def prolific_minimum_time(estimated_minutes: int) -> int:
    """Prolific's floor for `maximum_allowed_time`: 2 + 2·estimate + 2·√estimate minutes."""
    return math.ceil(2 + 2 * estimated_minutes + 2 * math.sqrt(estimated_minutes))


def reward_floor_check(*, reward_cents: int, minutes: int, currency: str) -> None:
    """Prolific refuses studies below its minimum hourly reward; say so before anything is sent."""
    floor = settings.PROLIFIC_MIN_HOURLY_REWARD.get(currency)
    if floor is None:
        return
    hourly = Decimal(reward_cents) / 100 * 60 / Decimal(max(1, minutes))
    if hourly < Decimal(floor):
        raise ApplicationError(
            f"Reward: {money(Decimal(reward_cents) / 100, currency)} for an estimated {minutes} minutes is "
            f"{money(hourly.quantize(Decimal('0.01')), currency)} an hour, below Prolific's minimum of "
            f"{money(Decimal(floor), currency)} an hour. Raise the study's hourly pay target (target_hourly_pay) or "
            "lower its estimated minutes.", code=REWARD_BELOW_MINIMUM, field="target_hourly_pay")


def filter_normalised(flt: dict[str, Any]) -> dict[str, Any]:
    """A range filter's numeric bounds as doubles: Prolific's description types a bound as oneOf integer / string /
    number, so an integer bound matches two of them and is invalid there; a double (18.0) is what both accept."""
    selected = flt.get("selected_range")
    if not isinstance(selected, dict):
        return dict(flt)
    bounds = {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in selected.items()}
    return {**flt, "selected_range": bounds}


def description_html(text: str) -> str:
    """The study's instructions as the paragraphs Prolific's description accepts (its allowed tags only)."""
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    return "".join(f"<p>{html.escape(p).replace(chr(10), ' ')}</p>" for p in paragraphs)


def study_filters(filters: list[dict[str, Any]], *, block_list_id: str, allow_list_id: str) -> list[dict[str, Any]]:
    """A study's filters as Prolific takes them (the draft and the eligibility count alike): the researcher's, then
    the block list and the allow list as participant-group filters."""
    out = [filter_normalised(flt) for flt in filters]
    if block_list_id:
        out.append({"filter_id": "participant_group_blocklist", "selected_values": [block_list_id]})
    if allow_list_id:
        out.append({"filter_id": "participant_group_allowlist", "selected_values": [allow_list_id]})
    return out


LANGUAGE_FILTER_TITLES = {"first": "first language", "fluent": "fluent languages"}


def language_filter(available: list[dict[str, Any]], *, kind: str, language_name: str,
                    own: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """(the `SelectFilter` recruiting speakers of `language_name`, a note for the plan). `kind`: "first" or "fluent".
    Ids come from Prolific's filter list, never guessed: no filter or no choice of that name gives no filter and a
    warning. A filter the researcher set already wins."""
    title = LANGUAGE_FILTER_TITLES[kind]
    found = next((f for f in available if f.get("type") in (None, "select")
                  and str(f.get("title") or "").strip().lower() == title and f.get("filter_id")), None)
    if found is None:
        return None, (f"Warning: Prolific's filter list has no \"{title.capitalize()}\" filter; no language filter "
                      "was set. Add one with --filters if you need it.")
    if any(f.get("filter_id") == found["filter_id"] for f in own):
        return None, f"Language: your own \"{found['title']}\" filter is used as you set it."
    choices = found.get("choices") or {}
    choice = next((str(k) for k, v in choices.items() if str(v).strip().lower() == language_name.lower()), None)
    if choice is None:
        return None, (f"Warning: Prolific's \"{found['title']}\" filter has no choice named \"{language_name}\"; no "
                      "language filter was set. Add one with --filters if you need it.")
    return ({"filter_id": str(found["filter_id"]), "selected_values": [choice]},
            f"Language: participants whose {title} is {language_name} (Prolific filter \"{found['title']}\").")
