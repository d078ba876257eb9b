"""What a door (an admin page, an API body) does with personal data: shows it to those who may see it and logs that
they did, or puts keyed pseudonyms in place of the raw ids for everyone else.

A door names the people it shows as (platform, raw id) pairs; `people_redact` replaces every whole occurrence of
their raw ids in a body (JSON-like values or text) with their pseudonyms, so an id inside a "platform:id" label, a
platform's request JSON or a message's evidence is caught as well as a column of ids.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.id_sweep import replacer
from core.personal_data import can_see_personal_data, personal_data_access_log
from core.pseudonyms import is_pseudonym, person_key

WITHHELD = "withheld (personal data)"


def people_pseudonyms(people: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Raw id → its person key, for the (platform, raw id) pairs a door shows (ids already pseudonyms skipped)."""
    return {str(external_id): person_key(platform=str(platform), external_id=str(external_id))
            for platform, external_id in people if external_id and not is_pseudonym(str(external_id))}


def people_redact(value: Any, *, pseudonyms: dict[str, str]) -> Any:
    """`value` (dicts, lists, tuples, strings, bytes; keys too) with each raw id of `pseudonyms` replaced by its
    pseudonym, as whole tokens (core.id_sweep's rule, the one erasure and retention use)."""
    return replacer(pseudonyms)(value)


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
