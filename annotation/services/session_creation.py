"""A participant's arrival: `session_create` starts their batch, or resumes it for the browser that started it (or
shows an ended one again), after the platform's and the study's entry checks."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.error_codes import NO_WORK_AVAILABLE, SCREENED_OUT
from annotation.models import Batch, Participant, Study
from annotation.services import participation
from annotation.services.engine import study_has_work_for
from annotation.services.review import worker_admission_check
from annotation.services.session_lookup import _not_found, batch_expire
from annotation.services.study_language import participant_language_activate
from core.errors import ApplicationError

PLATFORMS = {Participant.Platform.PROLIFIC, Participant.Platform.MTURK, Participant.Platform.ANONYMOUS}


# --- creating a session --------------------------------------------------------------------------------


@dataclass
class SessionResult:
    batch: Batch
    created: bool
    finished: bool = False  # an ended batch shown again to a new browser: its code or ending, never its token


def session_create(
    *, slug: str, participant_id: str = "", platform: str = Participant.Platform.ANONYMOUS, study_ref: str = "",
    session_ref: str = "", assignment: str = "", hit: str = "", proofs: tuple[str, ...] = (), address: str = "",
) -> SessionResult:
    """Start a participant's batch, or resume it for the client that started it.

    `proofs` are the session tokens the client holds (its resume cookie, a token sent in the body): a participant
    id alone never hands out a token (see `participation`). `address`: the client's, for the cap on batches open
    at once from one address (ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS; only its keyed pseudonym is kept)."""
    study = Study.objects.filter(slug=slug, status=Study.Status.ACTIVE, origin=Study.Origin.PLATFORM).first()
    if study is None:
        raise _not_found(f"Study '{slug}'")
    participant_language_activate(study)
    if platform not in PLATFORMS:
        raise ApplicationError(f"platform must be one of {sorted(PLATFORMS)}.",
                               details={"platform": [f"must be one of {sorted(PLATFORMS)}"]})
    participant_id = (participant_id or "").strip()
    if platform == Participant.Platform.MTURK:
        assignment = assignment or session_ref
        hit = hit or study_ref
    participation.entry_check(study=study, platform=platform, participant_id=participant_id, study_ref=study_ref,
                              session_ref=session_ref, assignment=assignment, hit=hit)
    worker_admission_check(study=study, platform=platform, participant_id=participant_id)  # blocked, qualified
    if not participant_id:
        if platform != Participant.Platform.ANONYMOUS:
            raise ApplicationError(f"participant is required for platform '{platform}'.",
                                   details={"participant": ["This field is required."]})
        participant_id = f"anon-{secrets.token_hex(8)}"
    if len(participant_id) > 128:
        raise ApplicationError("participant is longer than 128 characters.", details={"participant": ["too long"]})
    proofs = tuple(p for p in proofs if p and len(p) <= 64)
    for attempt in range(3):
        try:
            return _session_create_once(study=study, participant_id=participant_id, platform=platform,
                                        study_ref=study_ref, session_ref=session_ref, assignment=assignment, hit=hit,
                                        proofs=proofs, opened_from=participation.address_key(address))
        except IntegrityError:
            # Two first requests of one participant raced (participant_unique / one open batch): the retry finds
            # the winner's rows and returns its session.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _session_create_once(*, study: Study, participant_id: str, platform: str, study_ref: str, session_ref: str,
                         assignment: str, hit: str, proofs: tuple[str, ...], opened_from: str) -> SessionResult:
    now = timezone.now()
    with transaction.atomic():
        participant = Participant.objects.select_for_update().filter(
            study=study, platform=platform, external_id=participant_id
        ).first()
        if participant is None:
            # A newcomer: no batches to look at. A concurrent first request of the same person hits the unique
            # constraint here and the caller's retry finds this row.
            participant = Participant.objects.create(study=study, platform=platform, external_id=participant_id)
            n_batches = 0
        else:
            if participant.screened_out:
                raise ApplicationError(gettext("You are not eligible for this study."), code=SCREENED_OUT, status=403)
            owned = bool(proofs) and Batch.objects.filter(participant=participant, token__in=proofs).exists()
            open_batch = Batch.objects.select_for_update().filter(
                participant=participant, state__in=Batch.OPEN_STATES
            ).first()
            if open_batch is not None:
                open_batch.study = study
                open_batch.participant = participant
                if not batch_expire(batch=open_batch, now=now) and not _abandon_if_stale(open_batch, now=now):
                    if owned:
                        return SessionResult(open_batch, False)
                    raise participation.in_progress_elsewhere(open_batch)
            last = Batch.objects.filter(participant=participant).order_by("-number").first()
            declined = last is not None and last.state == Batch.State.DECLINED
            if owned and declined:
                last.study, last.participant = study, participant
                return SessionResult(last, False)  # declining is final: the declined ending again
            if not owned:
                shown = _ended_in_platform_session(participant=participant, platform=platform,
                                                   session_ref=session_ref, assignment=assignment)
                if shown is not None:
                    return SessionResult(shown, False, finished=True)
                field, value = participation.platform_session(platform=platform, session_ref=session_ref,
                                                              assignment=assignment)
                # MTurk: a new assignment is a new HIT the worker accepted (unless they declined: that is final).
                # Anything else needs the first browser.
                if not (field == "assignment" and not declined
                        and not Batch.objects.filter(participant=participant, assignment=value).exists()):
                    raise participation.already_participated()
            n_batches = Batch.objects.filter(participant=participant).count()
        if n_batches >= study.max_batches_per_participant:
            raise ApplicationError(
                gettext("You have completed the maximum of %(count)d batches of this study.")
                % {"count": study.max_batches_per_participant},
                code=NO_WORK_AVAILABLE, status=409,
            )
        # Excluded participants are told the same as when the study is full: never reveal a screening failure.
        if participant.excluded or not study_has_work_for(study=study, participant=participant):
            raise ApplicationError(gettext("There are no more items available for you in this study."),
                                   code=NO_WORK_AVAILABLE, status=409)
        participation.check_room(study=study, now=now)
        participation.check_address_room(study=study, now=now, opened_from=opened_from)
        batch = Batch.objects.create(
            study=study, participant=participant, number=n_batches + 1, token=secrets.token_urlsafe(32),
            study_ref=study_ref[:128], session_ref=session_ref[:128], assignment=assignment[:128], hit=hit[:128],
            opened_from=opened_from,
        )
    return SessionResult(batch, True)


def _abandon_if_stale(batch: Batch, *, now: datetime) -> bool:
    """A batch left before its items started for longer than the batch time limit ends (`expired`), so that
    the participant can start again elsewhere; it holds no items."""
    if batch.state == Batch.State.ITEMS or batch.created_at > participation.stale_before(study=batch.study, now=now):
        return False
    Batch.objects.filter(pk=batch.pk).update(state=Batch.State.EXPIRED, finished_at=now)
    batch.state = Batch.State.EXPIRED
    return True


def _ended_in_platform_session(*, participant: Participant, platform: str, session_ref: str,
                               assignment: str) -> Batch | None:
    """The completed (or declined) batch of this platform session (same Prolific SESSION_ID / MTurk
    assignmentId), if any: shown again, without its token, to a new browser of the same link."""
    field, value = participation.platform_session(platform=platform, session_ref=session_ref, assignment=assignment)
    if not field:
        return None
    return Batch.objects.select_related("study").filter(
        participant=participant, state__in=(Batch.State.COMPLETED, Batch.State.DECLINED), **{field: value}
    ).order_by("-number").first()
