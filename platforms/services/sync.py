"""Reading the platform's submissions into StyleCrowd: every page, each submission mapped to its participant.

A submission that became RETURNED or TIMED-OUT gives its slots back at once (annotation's `participant_departed`);
someone the platform knows and StyleCrowd does not is reported; a decision whose outcome was unknown is confirmed
when the platform shows it done. Webhook events go through the same `submission_apply`."""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import Participant
from annotation.services.departures import participant_departed
from annotation.services.persona_platform import persona_platform_missing, persona_platform_store
from core.errors import ApplicationError
from core.pseudonyms import is_pseudonym, person_key
from platforms.backends import backend_for, people_platform
from platforms.backends.base import PlatformBackend, SubmissionInfo
from platforms.clients.errors import PlatformCallError
from platforms.error_codes import NOT_PUBLISHED
from platforms.models import CallState, Decision, PlatformStudy, PlatformSubmission
from platforms.selectors import link_arrivals
from platforms.services.erasure import erased_scrub, erased_worker_id

logger = logging.getLogger(__name__)

LEFT_REASONS = {
    "RETURNED": "returned the submission on Prolific (withdrew: not paid, answers not used)",
    "TIMED-OUT": "timed out on Prolific",
}


def submission_apply(*, platform_study: PlatformStudy, info: SubmissionInfo,
                     backend: PlatformBackend) -> dict[str, Any]:
    """Store one submission as the platform reports it and act on what changed. Idempotent. A worker who asked
    for erasure is stored under their person key only (they have no participant any more); so is every worker of a
    study past its retention period (a late report stores the key, never the raw id)."""
    people = people_platform(platform_study.platform)  # the platform its people enter with: their person keys
    worker_id = erased_worker_id(platform=people, worker_id=info.worker_id)
    if worker_id != info.worker_id:
        info = replace(info, worker_id=worker_id, raw=erased_scrub(platform=people, value=info.raw))
    elif platform_study.study.retention_applied_at is not None and not is_pseudonym(info.worker_id):
        key = person_key(platform=people, external_id=info.worker_id)
        info = replace(info, worker_id=key, raw={})
    participant = Participant.objects.filter(study=platform_study.study, platform=people,
                                             external_id=info.worker_id).first()
    with transaction.atomic():
        row, created = PlatformSubmission.objects.select_for_update().get_or_create(
            platform_study=platform_study, external_id=info.external_id,
            defaults={"worker_id": info.worker_id, "status": info.status})
        changed = created or row.status != info.status
        row.worker_id = info.worker_id
        row.participant = participant
        row.status = info.status
        row.study_code = info.study_code or row.study_code
        row.started_at = info.started_at or row.started_at
        row.completed_at = info.completed_at or row.completed_at
        row.return_requested_at = info.return_requested_at or row.return_requested_at
        row.raw = info.raw
        row.save()
    released = 0
    if info.status in backend.LEFT and row.slots_released_at is None and participant is not None:
        result = participant_departed(
            study=platform_study.study, platform=people, external_id=info.worker_id,
            session_ref=info.external_id, withdrawn=info.status in backend.WITHDRAWN,
            reason=LEFT_REASONS.get(info.status, f"{info.status} on the platform"))
        released = result["slots_released"]
        PlatformSubmission.objects.filter(pk=row.pk).update(slots_released_at=timezone.now())
    confirmed = _confirm_unknown_decision(row, backend)
    persona = _persona_from_platform(platform_study=platform_study, info=info, participant=participant,
                                     backend=backend)
    return {"created": created, "changed": changed, "known": participant is not None, "released": released,
            "confirmed": confirmed, "persona_read": persona}


def _persona_from_platform(*, platform_study: PlatformStudy, info: SubmissionInfo, participant: Participant | None,
                           backend: PlatformBackend) -> list[str]:
    """Data minimisation: a study that reads persona attributes from the platform reads a completed submission's
    demographics once (while the participant lacks them) and keeps only the study's named attributes; the rest of
    the answer is dropped here, never stored or logged. A failed read changes nothing: the next sync reads again."""
    study = platform_study.study
    if participant is None or info.completed_at is None or study.retention_applied_at is not None:
        return []
    if not persona_platform_missing(study=study, participant=participant):
        return []
    try:
        demographics = backend.submission_demographics(info.external_id)
    except PlatformCallError as exc:
        logger.warning("study %s: demographics of a submission not read (%s); the next sync tries again",
                       study.slug, exc.code)
        return []
    if not demographics:
        return []
    return persona_platform_store(study=study, participant=participant, demographics=demographics)


def _confirm_unknown_decision(row: PlatformSubmission, backend: PlatformBackend) -> bool:
    """A decision left "unknown" is confirmed by a read: the platform shows the submission in the decided status (or
    a return requested)."""
    decision = Decision.objects.filter(submission=row, state=CallState.UNKNOWN).first()
    if decision is None:
        return False
    done = backend.DECIDED.get(decision.kind) == row.status or (
        decision.kind == Decision.Kind.RETURN and row.return_requested_at is not None)
    if done:
        Decision.objects.filter(pk=decision.pk, state=CallState.UNKNOWN).update(
            state=CallState.CONFIRMED, finished_at=timezone.now())
    return done


def platform_sync(*, platform_study: PlatformStudy, progress: Any = None) -> dict[str, Any]:
    """Read every submission of the study (all pages) and apply each. Reads only: safe to run any time."""
    if not platform_study.external_id:

        raise ApplicationError(f"Study {platform_study.study.slug} has no {platform_study.get_platform_display()} "
                               "study yet (publish it first).", code=NOT_PUBLISHED, status=409)
    backend = backend_for(platform_study.account)
    statuses: Counter[str] = Counter()
    unknown_people: list[str] = []
    totals: Counter[str] = Counter()
    try:
        # The study first: one the platform does not know is a clear 404 before anything is read or stored.
        external_status = backend.study_status(platform_study)
        if backend.ARRIVALS_FROM_LINK:
            backend.arrivals_record(platform_study, link_arrivals(platform_study=platform_study))
        for n, info in enumerate(backend.submissions(platform_study), start=1):
            result = submission_apply(platform_study=platform_study, info=info, backend=backend)
            statuses[info.status] += 1
            totals["created"] += result["created"]
            totals["changed"] += result["changed"]
            totals["slots_released"] += result["released"]
            totals["decisions_confirmed"] += result["confirmed"]
            totals["persona_attributes_read"] += len(result["persona_read"])
            if not result["known"]:
                unknown_people.append(info.worker_id)
            if progress:
                progress(n, 0)
    finally:
        backend.close()
    PlatformStudy.objects.filter(pk=platform_study.pk).update(synced_at=timezone.now(),
                                                              external_status=external_status or "")
    return {"study": platform_study.study.slug, "platform": platform_study.platform,
            "external_id": platform_study.external_id, "external_status": external_status,
            "submissions": sum(statuses.values()), "by_status": dict(sorted(statuses.items())),
            "new": totals["created"], "changed": totals["changed"], "slots_released": totals["slots_released"],
            "decisions_confirmed": totals["decisions_confirmed"],
            "persona_attributes_read": totals["persona_attributes_read"],
            "unknown_participants": sorted(set(unknown_people))}


def sync_published() -> dict[str, Any]:
    """Beat's fallback to webhooks: sync every published study; one failing study does not stop the others."""

    done, failed = 0, []
    for platform_study in PlatformStudy.objects.filter(state=PlatformStudy.State.PUBLISHED).select_related(
            "account", "study"):
        try:
            platform_sync(platform_study=platform_study)
            done += 1
        except Exception as exc:  # noqa: BLE001 - logged; the next beat tries again
            logging.getLogger(__name__).warning("sync of %s failed: %s", platform_study.study.slug, exc)
            failed.append(platform_study.study.slug)
    return {"synced": done, "failed": failed}
