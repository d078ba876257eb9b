"""Retention: what happens to a study's personal data once its retention period has passed.

A study is due when it is closed (`closed_at`), its platform payments are settled, and `retention_days` (the study's,
else settings.STYLECROWD_RETENTION_DAYS) have passed since the later of the close and the last money row finished.
Settled means nothing is left to send or to find out: no decision, bonus, bulk bonus or message pending, being sent
or with an unknown outcome, no platform study whose creation or publication outcome is unknown, and no submission
awaiting a decision. An unknown outcome blocks retention: a person resolving it on the platform needs the raw id.

Applying it to a study (one transaction per study):
- raw platform ids (participants, the platform's submissions, decisions, the bonus ledger, bulk bonus CSVs, messages,
  allow lists, and anything else linked to the study: every text and JSON column of every model that reaches the
  study by foreign keys, found by walking the model registry: core/id_sweep.py, the sweep erasure uses too) are
  replaced by `core.pseudonyms.person_key`;
- persona answers, eligibility answers and telemetry detail are deleted, the persona's k-anonymous aggregates kept
  for the card (annotation/services/retention.py);
- for people who have no raw-id participation left in any other study, the tables not linked to a study (webhook
  payloads, job rows, admin log entries, block lists, corpora built from rewrites) are scrubbed too. A blocked
  person stays blocked at StyleCrowd's door (the block matches their person key), but the platform's block list,
  which needs the raw id, no longer holds them.
Money rows keep their amounts and the platform's references (submission, bulk bonus and HIT ids); only the worker's id
becomes a person key.

Doors: `manage.py retention_apply [--study SLUG] [--apply]` (a dry run by default) and the daily beat task
`platforms.retention_apply`, which applies it and records the summary on a status row (core Job)."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import models, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.module_loading import import_string

from annotation.models import Participant, Study
from annotation.services.retention import study_personal_data_retire
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.id_sweep import ids_replace
from core.jobs import job_create
from core.models import Job
from core.pseudonyms import is_pseudonym, person_key
from platforms.backends import PLATFORM_BACKENDS, people_platform
from platforms.models import (
    BonusPayment,
    BulkBonus,
    CallState,
    Decision,
    PlatformMessage,
    PlatformStudy,
    PlatformSubmission,
)

OPEN_CALLS = (CallState.PENDING, CallState.SENDING, CallState.UNKNOWN)
OPEN_BONUSES = (BonusPayment.State.PENDING, BonusPayment.State.CLAIMED, BonusPayment.State.UNKNOWN)
OPEN_BULK = (BulkBonus.State.SETTING_UP, BulkBonus.State.SET_UP, BulkBonus.State.SETUP_UNKNOWN,
             BulkBonus.State.PAYING, BulkBonus.State.PAY_UNKNOWN)
UNKNOWN_STUDY_STATES = (PlatformStudy.State.CREATING, PlatformStudy.State.CREATE_UNKNOWN,
                        PlatformStudy.State.PUBLISHING, PlatformStudy.State.PUBLISH_UNKNOWN)
JOB_KIND = "retention_apply"


# --- when a study is due ------------------------------------------------------------------------------------------


def retention_days(*, study: Study) -> int:
    return study.retention_days if study.retention_days is not None else settings.STYLECROWD_RETENTION_DAYS


def retention_blockers(*, study: Study) -> list[str]:
    """Why the study's platform payments are not settled (empty: settled, or the study never went to a platform)."""
    platform_study = PlatformStudy.objects.filter(study=study).first()
    if platform_study is None:
        return []
    blockers = []
    if platform_study.state in UNKNOWN_STUDY_STATES:
        blockers.append(f"the platform study is '{platform_study.get_state_display()}'")
    open_rows = {
        "decision(s)": Decision.objects.filter(platform_study=platform_study, state__in=OPEN_CALLS),
        "bonus ledger row(s)": BonusPayment.objects.filter(platform_study=platform_study, state__in=OPEN_BONUSES),
        "bulk bonus(es)": BulkBonus.objects.filter(platform_study=platform_study, state__in=OPEN_BULK),
        "message(s)": PlatformMessage.objects.filter(platform_study=platform_study, state__in=OPEN_CALLS),
    }
    for what, rows in open_rows.items():
        unknown = rows.filter(state__in=(CallState.UNKNOWN, BonusPayment.State.UNKNOWN, BulkBonus.State.SETUP_UNKNOWN,
                                         BulkBonus.State.PAY_UNKNOWN)).count()
        pending = rows.count() - unknown
        if unknown:
            blockers.append(f"{unknown} {what} with an unknown outcome (resolve on the platform first)")
        if pending:
            blockers.append(f"{pending} {what} not sent or being sent")
    decidable = import_string(PLATFORM_BACKENDS[platform_study.platform]).DECIDABLE
    undecided = PlatformSubmission.objects.filter(platform_study=platform_study, status__in=decidable).exclude(
        decision__state__in=(CallState.SENT, CallState.CONFIRMED)).count()
    if undecided:
        blockers.append(f"{undecided} submission(s) awaiting a decision")
    return blockers


def settled_at(*, study: Study) -> datetime | None:
    """The later of the close and the last finished money row (a late bonus restarts the period)."""
    moments = [study.closed_at]
    platform_study = PlatformStudy.objects.filter(study=study).first()
    if platform_study is not None:
        moments += [
            Decision.objects.filter(platform_study=platform_study).aggregate(m=Max("finished_at"))["m"],
            BonusPayment.objects.filter(platform_study=platform_study).aggregate(m=Max("paid_at"))["m"],
            BonusPayment.objects.filter(platform_study=platform_study).aggregate(m=Max("resolved_at"))["m"],
            BulkBonus.objects.filter(platform_study=platform_study).aggregate(m=Max("finished_at"))["m"],
        ]
    found = [m for m in moments if m is not None]
    return max(found) if found else None


def retention_state(*, study: Study, now: datetime) -> dict[str, Any]:
    """Where one study stands: open, not_due (with its date), blocked (with why), due, or applied."""
    row: dict[str, Any] = {"study": study.slug, "retention_days": retention_days(study=study)}
    if study.retention_applied_at is not None:
        return {**row, "state": "applied", "applied_at": study.retention_applied_at}
    if study.status != Study.Status.CLOSED or study.closed_at is None:
        return {**row, "state": "open"}
    blockers = retention_blockers(study=study)
    if blockers:
        return {**row, "state": "blocked", "blockers": blockers}
    due_at = cast(datetime, settled_at(study=study)) + timedelta(days=row["retention_days"])  # settled: it is closed
    return {**row, "state": "due" if due_at <= now else "not_due", "due_at": due_at}


# --- the ids a study holds, and where they are --------------------------------------------------------------------


def study_raw_ids(*, study: Study) -> dict[str, str]:
    """Every raw platform id the study holds, mapped to its person key."""
    found: dict[str, str] = {}

    def add(platform: str, external_id: Any) -> None:
        value = str(external_id or "").strip()
        if value and not is_pseudonym(value):
            found.setdefault(value, person_key(platform=platform, external_id=value))

    for platform, external_id in Participant.objects.filter(study=study).values_list("platform", "external_id"):
        add(platform, external_id)
    platform_study = PlatformStudy.objects.filter(study=study).first()
    if platform_study is not None:
        platform = people_platform(platform_study.platform)
        for model in (PlatformSubmission, Decision, BonusPayment):
            for worker_id in model.objects.filter(platform_study=platform_study).values_list("worker_id", flat=True):
                add(platform, worker_id)
        for worker_id in (platform_study.allow_list or {}).get("participants") or []:
            add(platform, worker_id)
    return found


def _study_path(model: type[models.Model], depth: int = 3) -> str | None:
    """The lookup from `model` to its study by foreign keys ("study", "platform_study__study", ...), or None."""
    if model is Study:
        return "pk"
    frontier: list[tuple[type[models.Model], str]] = [(model, "")]
    for _ in range(depth):
        following = []
        for current, prefix in frontier:
            for field in current._meta.concrete_fields:
                if not field.is_relation or field.related_model is None:
                    continue
                path = prefix + field.name
                if field.related_model is Study:
                    return path
                following.append((field.related_model, path + "__"))
        frontier = following
    return None


def _still_held_elsewhere(*, study: Study, mapping: dict[str, str]) -> set[str]:
    """Raw ids that another study still holds (its retention has not come): left in tables not linked to a study."""
    raws = list(mapping)
    held = set(Participant.objects.filter(external_id__in=raws).exclude(study=study).values_list(
        "external_id", flat=True))
    held |= set(PlatformSubmission.objects.filter(worker_id__in=raws).exclude(
        platform_study__study=study).values_list("worker_id", flat=True))
    return held


# --- applying it --------------------------------------------------------------------------------------------------


def study_retention_apply(*, study: Study, apply: bool, now: datetime | None = None) -> dict[str, Any]:
    """Apply retention to one due study (checks are the caller's: `retention_state`). Dry run: counts only."""
    now = now or timezone.now()
    with transaction.atomic():
        if apply:
            study = Study.objects.select_for_update().get(pk=study.pk)
            if study.retention_applied_at is not None:
                return {"ids_replaced": 0, "rows_changed": {}}
        mapping = study_raw_ids(study=study)
        deleted = study_personal_data_retire(study=study, apply=apply)

        def linked(model: type[models.Model]) -> Any:
            path = _study_path(model)
            return None if path is None else model._default_manager.filter(**{path: study.pk})

        held = _still_held_elsewhere(study=study, mapping=mapping)
        rows_changed = ids_replace(mapping=mapping, rows_of=linked, apply=apply)
        gone = {raw: key for raw, key in mapping.items() if raw not in held}

        def unlinked(model: type[models.Model]) -> Any:
            return model._default_manager.all() if _study_path(model) is None else None

        for label, n in ids_replace(mapping=gone, rows_of=unlinked, apply=apply).items():
            rows_changed[label] = rows_changed.get(label, 0) + n
        if apply:
            Study.objects.filter(pk=study.pk).update(retention_applied_at=now)
    return {"ids_replaced": len(mapping), "ids_kept_for_other_studies": len(held), **deleted,
            "rows_changed": dict(sorted(rows_changed.items()))}


def retention_apply(*, apply: bool, now: datetime | None = None, study: Study | None = None) -> dict[str, Any]:
    """Find the studies whose retention period has passed and apply it (`apply`) or say what it would change.

    With `study`, that study only (its state is reported whatever it is); without, every closed study not yet
    applied. Idempotent: an applied study is reported and left alone."""
    now = now or timezone.now()
    if study is not None:
        candidates = [study]
    else:
        candidates = list(Study.objects.filter(status=Study.Status.CLOSED, closed_at__isnull=False,
                                               retention_applied_at__isnull=True).order_by("closed_at", "pk"))
    rows = []
    for candidate in candidates:
        row = retention_state(study=candidate, now=now)
        if row["state"] == "due":
            row["changes"] = study_retention_apply(study=candidate, apply=apply, now=now)
            row["state"] = "applied_now" if apply else "would_apply"
        rows.append(row)
    states = [r["state"] for r in rows]
    return {"apply": apply, "now": now, "studies": rows,
            **{state: states.count(state) for state in ("applied_now", "would_apply", "blocked", "not_due")}}


def retention_study_get(*, slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study '{slug}' not found.", code=NOT_FOUND, status=404, field="study")
    return study


def retention_apply_start(*, created_by: str = "beat") -> Job:
    """The status row of one scheduled run (beat starts the task itself; the row records its summary)."""
    return job_create(kind=JOB_KIND, params={"apply": True}, created_by=created_by)


def retention_apply_execute(*, job: Job) -> dict[str, Any]:
    """The job's body: retention over every due study; the summary (JSON-ready) becomes the job's result."""
    return _json_ready(retention_apply(apply=bool(job.params.get("apply", True))))


def _json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value
