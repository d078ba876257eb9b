"""Who may see personal data, and the log of every look at it.

Personal data here means raw platform ids (PROLIFIC_PID, MTurk WorkerId), persona answers and telemetry detail.
Seeing it takes the permission `core.view_personal_data`, separate from the researcher role (core/roles.py); without
it the admin and the API show keyed pseudonyms (core/pseudonyms.py). Every view or export of personal data by a
person writes one `PersonalDataAccess` row: who, when, through which door, what, and how many people.
"""
from __future__ import annotations

from typing import Any

from core.models import PersonalDataAccess

PERSONAL_DATA_PERMISSION = "core.view_personal_data"


def can_see_personal_data(user: Any) -> bool:
    """Whether this account may see raw ids, persona answers and telemetry detail (superusers may)."""
    return bool(user is not None and getattr(user, "is_active", False) and user.has_perm(PERSONAL_DATA_PERMISSION))


def personal_data_access_log(
    *, user: Any, door: str, what: str, people: int, study_slug: str = ""
) -> PersonalDataAccess:
    """Write one row of the access log (a person saw `people` people's personal data through `door`)."""
    account = user if getattr(user, "pk", None) else None
    return PersonalDataAccess.objects.create(
        user=account, username=getattr(account, "username", "") or "", door=door, what=what[:300],
        study_slug=study_slug[:80], people=max(0, int(people)),
    )
