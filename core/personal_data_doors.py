"""What a door (an admin page, an API body) does with personal data: shows it to those who may see it and logs that
they did, or puts keyed pseudonyms in place of the raw ids for everyone else.

A door names the people it shows as (platform, raw id) pairs; `people_redact` replaces every whole occurrence of
their raw ids in a body (JSON-like values or text) with their pseudonyms, so an id inside a "platform:id" label, a
platform's request JSON or a message's evidence is caught as well as a column of ids.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.personal_data import can_see_personal_data, personal_data_access_log
from core.pseudonyms import is_pseudonym, person_key

WITHHELD = "withheld (personal data)"


def people_pseudonyms(people: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Raw id → its person key, for the (platform, raw id) pairs a door shows (ids already pseudonyms skipped)."""
    return {str(external_id): person_key(platform=str(platform), external_id=str(external_id))
            for platform, external_id in people if external_id and not is_pseudonym(str(external_id))}


def _pattern(ids: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first, and never inside a longer word, so "P1" does not eat into "P10" or an unrelated token.
    ordered = sorted(set(ids), key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, ordered)) + r")(?![A-Za-z0-9_])")


def people_redact(value: Any, *, pseudonyms: dict[str, str]) -> Any:
    """`value` (dicts, lists, strings, bytes; keys too) with each raw id of `pseudonyms` replaced by its pseudonym."""
    pattern = _pattern(pseudonyms)
    if pattern is None:
        return value

    def sub(text: str) -> str:
        return pattern.sub(lambda match: pseudonyms[match.group(1)], text)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return sub(item)
        if isinstance(item, bytes):
            return sub(item.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")
        if isinstance(item, dict):
            return {walk(k): walk(v) for k, v in item.items()}
        if isinstance(item, tuple):
            return tuple(walk(v) for v in item)
        if isinstance(item, list):  # plain lists: DRF's ReturnList cannot be rebuilt without its serializer
            return [walk(v) for v in item]
        return item

    return walk(value)


def personal_data_door(
    *, request: Any, door: str, what: str, body: Any, people: Iterable[tuple[str, str]], study_slug: str = "",
    withhold: Any = None,
) -> Any:
    """The body a person may see. With the personal-data permission: `body` as it is, and one access-log row when it
    shows anyone. Without: `withhold(body)` when given (drops persona answers and telemetry detail), then the raw ids
    of `people` replaced by pseudonyms. Nothing is logged for a body that shows nobody's personal data."""
    people = list(people)
    user = getattr(request, "user", None)
    if can_see_personal_data(user):
        shown = {(str(platform), str(external_id)) for platform, external_id in people
                 if external_id and not is_pseudonym(str(external_id))}
        if shown:
            personal_data_access_log(user=user, door=door, what=what, people=len(shown), study_slug=study_slug)
        return body
    if withhold is not None:
        body = withhold(body)
    return people_redact(body, pseudonyms=people_pseudonyms(people))
