"""A study between creation and its first participant: preview its items as a participant sees them, the links to
give the crowd platform, opening it (draft → active), which needs items, and closing it (active → closed), which
starts the retention clock (platforms/services/retention.py)."""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.error_codes import NO_ITEMS, PLATFORM_MISMATCH, WRONG_STATE
from annotation.models import Batch, Reservation, Study
from annotation.services.consent import special_category_check
from annotation.services.display import public_item, redirect_with_code, shown_for_item
from annotation.services.engine import reservations_release
from annotation.services.participation import PROLIFIC_ID, accepted_platforms
from annotation.services.persona_platform import questions_asked
from annotation.services.practice import practice_preview
from annotation.services.screening import study_screening_check
from annotation.services.study_language import study_language_warnings
from core.errors import ApplicationError

PROLIFIC_QUERY = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def study_open(*, study: Study) -> Study:
    """Open a draft (or closed) study to participants; refused while it has no items, or while it asks
    special-category questions without the explicit-consent statement (an edit of its questions may add one), or
    while it asks for more screening questions per batch than it has in its language (`study_screening_check`).
    Opening a closed study again clears `closed_at` (the retention clock starts anew at the next close), and is
    refused once retention has replaced its participants' ids: new people's raw ids would sit beside pseudonyms
    nobody can recognise again."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if not locked.items.exists():
            raise ApplicationError(f"Study '{locked.slug}' has no items: it cannot be opened to participants.",
                                   code=NO_ITEMS, status=409)
        if locked.retention_applied_at is not None:
            raise ApplicationError(f"Study '{locked.slug}' is past its retention period (its participants' ids are "
                                   "pseudonyms now): it cannot be opened again; copy it into a new study instead.",
                                   code=WRONG_STATE, status=409)
        special_category_check(questions=locked.eligibility_questions, statement=locked.special_category_consent,
                               where=f"Study '{locked.slug}' cannot be opened. ")
        study_screening_check(study=locked)
        if locked.status != Study.Status.ACTIVE:
            locked.status = Study.Status.ACTIVE
            locked.closed_at = None
            locked.save(update_fields=["status", "closed_at"])
    return locked


def study_close(*, study: Study, now: datetime | None = None) -> dict[str, Any]:
    """Close a study: no new sessions (session creation takes active studies only), and every open session ends
    now (expired, its unanswered reservations released), so no answer arrives after the close. `closed_at` starts
    the retention period. Closing a closed study changes nothing (its `closed_at` is kept)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status == Study.Status.CLOSED and locked.closed_at is not None:
            return {"study": locked.slug, "status": locked.status, "closed_at": locked.closed_at,
                    "already_closed": True, "sessions_ended": 0, "reservations_released": 0}
        locked.status = Study.Status.CLOSED
        locked.closed_at = now
        locked.save(update_fields=["status", "closed_at"])
        open_batches = Batch.objects.select_for_update().filter(study=locked, state__in=Batch.OPEN_STATES)
        batch_ids = list(open_batches.values_list("pk", flat=True))
        released = reservations_release(
            Reservation.objects.filter(batch_id__in=batch_ids, answered_at__isnull=True, released=False), now=now)
        Batch.objects.filter(pk__in=batch_ids).update(state=Batch.State.EXPIRED, finished_at=now)
    study.status, study.closed_at = locked.status, locked.closed_at
    return {"study": locked.slug, "status": locked.status, "closed_at": locked.closed_at, "already_closed": False,
            "sessions_ended": len(batch_ids), "reservations_released": released}


def study_participant_links(*, study: Study, base_url: str) -> dict[str, str]:
    """The URLs to paste into Prolific (with its placeholders) and MTurk (which appends its own parameters), and the
    anonymous link: for the platforms the study accepts only (a link it would refuse is never offered)."""
    entry = f"{base_url.rstrip('/')}/s/{study.slug}/"
    links = {"prolific": entry + PROLIFIC_QUERY, "mturk": entry, "anonymous": entry}
    return {platform: links[platform] for platform in accepted_platforms(study)}


def study_preview_items(*, study: Study, n: int = 3) -> list[dict[str, Any]]:
    """The first `n` items as the participant API sends them (fixed seed: the same preview every time)."""
    rng = random.Random(0)
    items = study.items.select_related("instance").order_by("position", "pk")[:n]
    return [public_item(shown=shown_for_item(study=study, item=item, rng=rng), public_id=f"preview-{i + 1}",
                        position=i + 1, study=study) for i, item in enumerate(items)]


PREVIEW_ITEMS = 3


def study_preview(*, study: Study, platform: str) -> dict[str, Any]:
    """What the participant page needs to run in preview mode for a participant arriving from `platform` (one of
    the platforms the study accepts): the first items as they are served, the practice items with their answers,
    the eligibility rules and both codes with their redirects. The page plays the session in the browser from this
    and sends nothing: a preview stores no participant, batch, reservation or answer."""
    if platform not in accepted_platforms(study):
        accepted = ", ".join(accepted_platforms(study))
        raise ApplicationError(f"Study '{study.slug}' does not take {platform} links (it takes {accepted}).",
                               code=PLATFORM_MISMATCH, status=404, field="platform")

    codes = {"completed": study.completion_code, "screened_out": study.screened_out_code}
    return {
        "platform": platform,
        "items": study_preview_items(study=study, n=PREVIEW_ITEMS),
        "n_items": study.items.count(),
        "practice": practice_preview(study=study) if study.practice_items.exists() else [],
        "eligibility": [{"name": q["name"], "accept": [str(a) for a in q.get("accept") or []],
                         "comprehension": bool(q.get("comprehension"))}
                        for q in questions_asked(study.eligibility_questions)],
        "codes": codes,
        "language_warnings": study_language_warnings(study=study),
        "redirects": {state: redirect_with_code(study.redirect_url or "", code, platform=platform)
                      for state, code in codes.items()},
    }


def study_test_study_add(*, study: Study, test_study_id: str) -> Study:
    """Accept the links of a Prolific test study of this study's draft too (a test participant's pre-flight run)."""
    if not PROLIFIC_ID.match(test_study_id or ""):
        raise ApplicationError("test_study_id: a Prolific study id (24 hexadecimal characters).",
                               field="test_study_id")
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if test_study_id.lower() not in locked.prolific_test_study_ids:
            locked.prolific_test_study_ids = [*locked.prolific_test_study_ids, test_study_id.lower()]
            locked.save(update_fields=["prolific_test_study_ids"])
    return locked


def study_platform_link(*, study: Study, platform: str, prolific_study_id: str = "") -> Study:
    """A study published on a crowd platform takes that platform's links only (checked, no anonymous entry), and a
    Prolific study's links must carry its Prolific study id (the entry check compares STUDY_ID with it)."""
    if platform not in ("prolific", "mturk"):
        raise ApplicationError(f"platform: prolific or mturk, not {platform!r}", field="platform")
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.platform not in ("any", platform):
            raise ApplicationError(f"Study '{locked.slug}' takes {locked.platform} links only; it cannot run on "
                                   f"{platform}.", code=PLATFORM_MISMATCH, status=409, field="platform")
        locked.platform = platform
        locked.allow_anonymous = False
        if prolific_study_id:
            locked.prolific_study_id = prolific_study_id
        locked.save(update_fields=["platform", "allow_anonymous", "prolific_study_id"])
    return locked
