"""Who may take part, and how much room one arrival may take (docs/annotator-api.md, "Who may take part").

- `entry_check`: a link's platform parameters, checked against what the study requires (Prolific's PROLIFIC_PID,
  STUDY_ID and SESSION_ID; MTurk's workerId, hitId and assignmentId) before anything is stored.
- Ownership: a participant id alone never hands out a session. The client that started a batch proves it with
  the batch's token (the resume cookie, or the token in the body); anyone else presenting the same id gets
  `session_in_progress` while a batch is open, sees the code of a batch they finished with the same platform
  session (Prolific SESSION_ID, MTurk assignmentId), and is otherwise refused (`already_participated`).
- Room: a started batch has `grace` seconds to send its first answer, or its items go back; the number of
  batches open at once can be capped per study.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext

from annotation.error_codes import (
    ALREADY_PARTICIPATED,
    INVALID_LINK,
    SESSION_IN_PROGRESS,
    STUDY_BUSY,
    TOO_MANY_OPEN_FROM_ADDRESS,
)
from annotation.models import Batch, EntryPlatform, Participant, Study
from annotation.selectors import grace_seconds
from core.errors import ApplicationError
from core.pseudonyms import pseudonym

PROLIFIC_ID = re.compile(r"^[0-9a-fA-F]{24}$")  # Prolific's participant and study ids: 24 hexadecimal characters
PROLIFIC_SESSION = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
MTURK_ID = re.compile(r"^[0-9A-Z]{10,64}$")  # workerId, hitId, assignmentId: upper-case letters and digits
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# An unreplaced template of a platform's link (`{{%PROLIFIC_PID%}}`, `${workerId}`), or anything unprintable.
PLACEHOLDER = re.compile(r"\{\{|\}\}|%[A-Za-z_]+%|\$\{|[\x00-\x1f\x7f]")
STUDY_BUSY_RETRY_SECONDS = 60


def accepted_platforms(study: Study) -> list[str]:
    """The links a study takes, in the order the researcher meets them: a Prolific or MTurk study only its own
    platform's, an "any" study both, plus the anonymous link unless it is switched off. `entry_check` refuses the
    rest; the preview and the links offered to the researcher show exactly these."""
    if study.platform in (EntryPlatform.PROLIFIC, EntryPlatform.MTURK):
        return [str(study.platform)]
    platforms = [Participant.Platform.PROLIFIC.value, Participant.Platform.MTURK.value]
    return platforms + ([Participant.Platform.ANONYMOUS.value] if study.allow_anonymous else [])


def _bad_link(field: str, message: str) -> ApplicationError:
    return ApplicationError(f"{field}: {message}", code=INVALID_LINK, status=400, details={field: [message]})


def entry_check(*, study: Study, platform: str, participant_id: str, study_ref: str, session_ref: str,
                assignment: str, hit: str) -> None:
    """Refuse (400 `invalid_link`) a link whose parameters the study does not accept. Field names in the
    message are the platform's own (PROLIFIC_PID, workerId, …), as the participant's link shows them."""
    names = {"prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
             "mturk": ("workerId", "hitId", "assignmentId")}.get(platform, ("participant", "study_ref", "session_ref"))
    given = {names[0]: participant_id, names[1]: hit if platform == "mturk" else study_ref,
             names[2]: assignment if platform == "mturk" else session_ref}
    for field, value in given.items():
        if value and PLACEHOLDER.search(value):
            raise _bad_link(field, gettext("the link still holds an unreplaced placeholder or a control character; "
                                           "open the study from the platform's own link."))
    source = {EntryPlatform.PROLIFIC: "Prolific", EntryPlatform.MTURK: "MTurk"}.get(study.platform,
                                                                                  gettext("Prolific or MTurk"))
    if platform not in accepted_platforms(study):
        raise _bad_link("platform", gettext("this study takes participants from %(platform)s links only: open it "
                                            "from the study's page on %(platform)s.") % {"platform": source})
    if platform == Participant.Platform.ANONYMOUS:
        return
    if study.platform == EntryPlatform.PROLIFIC:
        _prolific_link_check(study, participant_id=participant_id, study_ref=study_ref, session_ref=session_ref)
    elif study.platform == EntryPlatform.MTURK:
        _mturk_link_check(given, assignment=assignment)


def _prolific_link_check(study: Study, *, participant_id: str, study_ref: str, session_ref: str) -> None:
    if not PROLIFIC_ID.match(participant_id):
        raise _bad_link("PROLIFIC_PID", gettext("must be a Prolific id of 24 hexadecimal characters."))
    if not PROLIFIC_ID.match(study_ref):
        raise _bad_link("STUDY_ID", gettext("must be a Prolific study id of 24 hexadecimal characters."))
    if study.prolific_study_id and study_ref.lower() != study.prolific_study_id.lower() and (
            study_ref.lower() not in study.prolific_test_study_ids):
        raise _bad_link("STUDY_ID", gettext("this link belongs to another Prolific study."))
    if not PROLIFIC_SESSION.match(session_ref):
        raise _bad_link("SESSION_ID", gettext("is missing or malformed."))


def _mturk_link_check(given: dict[str, str], *, assignment: str) -> None:
    if assignment == MTURK_PREVIEW:
        raise _bad_link("assignmentId", gettext("this is MTurk's preview: accept the HIT first."))
    for field, value in given.items():
        if not MTURK_ID.match(value):
            raise _bad_link(field, gettext("is missing or malformed (upper-case letters and digits)."))


# --- room ---------------------------------------------------------------------------------------------------


def first_answer_deadline(*, study: Study, now: datetime) -> datetime:
    """Until its first answer a started batch (and each of its reservations) lives only this long."""
    limit = timedelta(minutes=study.batch_time_limit_minutes)
    return now + min(timedelta(seconds=grace_seconds(study)), limit)


def batch_deadline(*, time_limit_minutes: int, started_at: datetime) -> datetime:
    """The batch's time limit, which its first answer extends it to (both serving paths)."""
    return started_at + timedelta(minutes=time_limit_minutes)


def batch_time_limit_at(batch: Batch) -> datetime | None:
    """The `expires_at` participants are shown: the batch's time limit. (Until its first answer the batch is held
    only for the grace period; the page counts down the time limit, which is what a participant plans by.)"""
    if batch.started_at is None:
        return batch.expires_at
    return batch_deadline(time_limit_minutes=batch.study.batch_time_limit_minutes, started_at=batch.started_at)


def open_batches_count(*, study: Study, now: datetime, exclude_pk: int | None = None,
                       started_only: bool = False) -> int:
    """Batches that take room now: started and not overdue, or (unless `started_only`: the count a start is
    checked against) not started yet but created within the grace period (an arrival that never gets past
    consent stops counting then, and holds no items anyway)."""
    room = Q(state=Batch.State.ITEMS, expires_at__gt=now)
    if not started_only:
        recent = now - timedelta(seconds=grace_seconds(study))
        room |= Q(state__in=(Batch.State.CONSENT, Batch.State.ELIGIBILITY, Batch.State.INSTRUCTIONS),
                  created_at__gt=recent)
    qs = Batch.objects.filter(room, study=study)
    if exclude_pk is not None:
        qs = qs.exclude(pk=exclude_pk)
    return qs.count()


def study_busy() -> ApplicationError:
    return ApplicationError(
        gettext("This study is busy right now: every place is taken. Please try again in a minute."),
        code=STUDY_BUSY, status=409, details={"retry_after": STUDY_BUSY_RETRY_SECONDS},
        headers={"Retry-After": str(STUDY_BUSY_RETRY_SECONDS)},
    )


def check_room(*, study: Study, now: datetime, exclude_pk: int | None = None, started_only: bool = False) -> None:
    """409 `study_busy` (with Retry-After) when the study's cap of open batches is reached."""
    if study.max_open_batches and open_batches_count(
        study=study, now=now, exclude_pk=exclude_pk, started_only=started_only
    ) >= study.max_open_batches:
        raise study_busy()


def address_key(address: str) -> str:
    """What a batch keeps of the client address that opened it: a keyed pseudonym, never the address."""
    return pseudonym(platform="address", external_id=address) if address else ""


def check_address_room(*, study: Study, now: datetime, opened_from: str) -> None:
    """429 with Retry-After when the batches of the study open from this address (counted as `open_batches_count`
    counts them) reach ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS. Counted, not locked: a burst of simultaneous
    requests may pass the cap by the requests in flight, which the rate limit per address bounds."""
    cap = int(settings.ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS or 0)
    if not cap or not opened_from:
        return
    recent = now - timedelta(seconds=grace_seconds(study))
    room = Q(state=Batch.State.ITEMS, expires_at__gt=now) | Q(
        state__in=(Batch.State.CONSENT, Batch.State.ELIGIBILITY, Batch.State.INSTRUCTIONS), created_at__gt=recent)
    if Batch.objects.filter(room, study=study, opened_from=opened_from).count() >= cap:
        wait = min(grace_seconds(study), STUDY_BUSY_RETRY_SECONDS * 5)
        raise ApplicationError(
            "Too many sessions of this study are open from your network right now. Please finish yours, or try "
            "again in a few minutes.", code=TOO_MANY_OPEN_FROM_ADDRESS, status=429,
            details={"retry_after": wait}, headers={"Retry-After": str(wait)})


# --- ownership ----------------------------------------------------------------------------------------------


def in_progress_elsewhere(batch: Batch) -> ApplicationError:
    until = batch.expires_at if batch.state == Batch.State.ITEMS else None
    return ApplicationError(
        gettext("This study is already in progress in another browser or device. Continue there. If you cannot, "
                "wait until its time limit has passed and open the link again, or return the study on your "
                "platform (Prolific: return your submission; MTurk: return the HIT)."),
        code=SESSION_IN_PROGRESS, status=409,
        details={"state": batch.state, "available_at": until.isoformat() if until else None},
    )


def already_participated() -> ApplicationError:
    return ApplicationError(
        gettext("You have already taken part in this study from another browser or device. Please continue in "
                "that browser, or contact the researcher through your platform."),
        code=ALREADY_PARTICIPATED, status=409,
    )


def stale_before(*, study: Study, now: datetime) -> datetime:
    """A batch not started by then is abandoned: another browser of the same participant may take over."""
    return now - timedelta(minutes=study.batch_time_limit_minutes)


def platform_session(*, platform: str, session_ref: str, assignment: str) -> tuple[str, str]:
    """The Batch field and value naming the platform's session of this arrival (one Prolific submission, one
    MTurk assignment), or ("", "") when the link has none."""
    if platform == Participant.Platform.MTURK:
        return ("assignment", assignment) if assignment else ("", "")
    if platform == Participant.Platform.PROLIFIC and session_ref:
        return "session_ref", session_ref
    return "", ""
