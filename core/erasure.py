"""Erasure on request: one person's data gone from every study, every table and the media folder.

Each app registers an eraser for the tables it owns (in its AppConfig.ready(), from its own `services/erasure.py`),
so core imports no app. `participant_erase` runs every eraser in one transaction, then a sweep (core/id_sweep.py)
walks the model registry and rewrites whatever text or JSON column still mentions the raw id (job parameters, admin
log entries, webhook payloads, csv text sent to a platform) with the person's key, so the raw id is left nowhere,
whichever app forgot a column. A dry run is the same work rolled back: its counts are exactly what `--apply` would do.

The person is remembered only by a tombstone (`core.ErasureTombstone`): the keyed hash, the date, the counts and the
studies touched, never the raw id. Imports, platform syncs and webhooks look it up (`erasure_tombstone_for`), and
runs computed before an erasure say so (`erasures_after`).
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.error_codes import INVALID, NOTHING_TO_ERASE
from core.errors import ApplicationError
from core.id_sweep import ids_replace
from core.id_sweep import text_columns as text_columns  # the sweep's columns, as erasure's callers know them
from core.jobs import job_create, job_enqueue
from core.models import ErasureTombstone, Job
from core.pseudonyms import is_pseudonym, person_key

logger = logging.getLogger(__name__)

# Annotators read from a researcher's file (`import_annotations`: a long file's annotator column, a wide file's rater
# id columns) are stored under this platform with the id the file gave, often the same person's Prolific or MTurk id.
IMPORTED = "imported"
# The platforms an erasure can be asked for. Erasing a platform's person also erases the imported annotators stored
# under the same id; `imported` alone erases only those.
ERASABLE_PLATFORMS = ("prolific", "mturk", "anonymous", IMPORTED)
# Every platform a person's raw id may be stored under.
KNOWN_PLATFORMS = ERASABLE_PLATFORMS


@dataclass(frozen=True)
class ErasureTarget:
    """Who is erased. Erasers write as if applying: a dry run rolls their work back."""

    platform: str
    external_id: str
    person_key: str
    now: datetime

    @property
    def participant_platforms(self) -> tuple[str, ...]:
        """The platforms of the participant rows that are this person: theirs and, for a platform's person, the
        imported annotators stored under the same id (the same person's ratings read from a file)."""
        return (self.platform,) if self.platform == IMPORTED else (self.platform, IMPORTED)


@dataclass
class ErasurePart:
    """What one eraser did: rows per table ("app.Model": n; deleted or pseudonymised) and the studies touched."""

    counts: dict[str, int] = field(default_factory=dict)
    study_ids: set[int] = field(default_factory=set)
    # Of those rows, what was read from imported files: {"participants": n, "ratings": n} (annotation's eraser).
    imported: dict[str, int] = field(default_factory=dict)


Eraser = Callable[[ErasureTarget], ErasurePart]


@dataclass(frozen=True)
class RegisteredEraser:
    name: str
    eraser: Eraser
    order: int


_ERASERS: dict[str, RegisteredEraser] = {}


def register_eraser(*, name: str, eraser: Eraser, order: int = 100) -> None:
    """Register (or replace, on a second ready()) the eraser of one app's tables; lower `order` runs first."""
    _ERASERS[name] = RegisteredEraser(name=name, eraser=eraser, order=order)


def registered_erasers() -> list[RegisteredEraser]:
    return sorted(_ERASERS.values(), key=lambda e: (e.order, e.name))


# --- the sweep: every text and JSON column of every model (core/id_sweep.py), and the media folder -------------

def mentions_sweep(*, external_id: str, replacement: str) -> dict[str, int]:
    """Rewrite every mention of the raw id left in any text or JSON column with `replacement`; rows per table.

    Written even in a dry run: `participant_erase` rolls the whole transaction back, so the counts are the work
    itself. Tombstones are the record of erasures and are left as they were written."""
    return ids_replace(mapping={external_id: replacement}, apply=True,
                       rows_of=lambda model: None if model is ErasureTombstone else model._default_manager.all())


def media_files_with(external_id: str) -> list[Path]:
    """Files under MEDIA_ROOT whose name or content holds the raw id."""
    root = Path(settings.MEDIA_ROOT)
    if not root.is_dir():
        return []
    needle = external_id.encode()
    found = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            try:
                if external_id in name or needle in path.read_bytes():
                    found.append(path)
            except OSError:
                continue
    return found


def media_files_erase(*, paths: list[Path], external_id: str, replacement: str) -> dict[str, int]:
    """Text files are rewritten with `replacement`; files that are not UTF-8 text (Parquet, zip) cannot be edited
    safely and are deleted; a name holding the id is renamed."""
    rewritten = deleted = 0
    for path in paths:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            path.unlink(missing_ok=True)
            deleted += 1
            continue
        path.write_text(text.replace(external_id, replacement), encoding="utf-8")
        if external_id in path.name:
            path.rename(path.with_name(path.name.replace(external_id, replacement)))
        rewritten += 1
    return {"rewritten": rewritten, "deleted": deleted}


# --- the orchestrator ------------------------------------------------------------------------------------------

def _target(*, platform: str, external_id: str) -> ErasureTarget:
    if platform not in ERASABLE_PLATFORMS:
        raise ApplicationError(f"Platform: must be one of {', '.join(ERASABLE_PLATFORMS)}, not {platform!r}.",
                               code=INVALID, field="platform")
    external_id = (external_id or "").strip()
    if not external_id:
        raise ApplicationError("Id: the participant's platform id is required.", code=INVALID, field="external_id")
    if is_pseudonym(external_id):
        raise ApplicationError("Id: this is a pseudonym, not a platform id; its raw id is no longer held.",
                               code=INVALID, field="external_id")
    return ErasureTarget(platform=platform, external_id=external_id,
                         person_key=person_key(platform=platform, external_id=external_id), now=timezone.now())


def participant_erase(*, platform: str, external_id: str, apply: bool, requested_by: str = "",
                      reason: str = "") -> dict[str, Any]:
    """Erase one person's data across every study (`apply`), or say table by table what would go (dry run).

    A platform's person is erased with the imported annotators stored under the same id (their ratings read from a
    file); the summary's `imported` says how many of those participants and ratings went (they are also counted in
    `tables`). Raises `nothing_to_erase` (404) when no table and no media file holds the id. The summary and the log
    carry the person key, never the raw id."""
    target = _target(platform=platform, external_id=external_id)
    counts: dict[str, int] = {}
    study_ids: set[int] = set()
    imported = {"participants": 0, "ratings": 0}
    with transaction.atomic():
        for registered in registered_erasers():
            part = registered.eraser(target)
            for table, n in part.counts.items():
                if n:
                    counts[table] = counts.get(table, 0) + n
            study_ids |= part.study_ids
            for what, n in part.imported.items():
                imported[what] = imported.get(what, 0) + n
        mentions = mentions_sweep(external_id=target.external_id, replacement=target.person_key)
        files = media_files_with(target.external_id)
        if not counts and not mentions and not files:
            also = "" if platform == IMPORTED else " (nor for an imported annotator with this id)"
            raise ApplicationError(f"No data is held for this {platform} id{also}: nothing was erased.",
                                   code=NOTHING_TO_ERASE, status=404)
        summary: dict[str, Any] = {
            "applied": apply, "platform": platform, "person_key": target.person_key,
            "tables": dict(sorted(counts.items())), "imported": imported,
            "mentions_replaced": dict(sorted(mentions.items())), "media_files": len(files),
            "studies": sorted(study_ids),
        }
        if apply:
            tombstone = ErasureTombstone.objects.create(
                person_key=target.person_key, platform=platform, erased_at=target.now, requested_by=requested_by[:150],
                reason=reason[:300], counts={**summary["tables"], "mentions": sum(mentions.values()),
                                             "media_files": len(files), "imported_participants":
                                             imported["participants"], "imported_ratings": imported["ratings"]},
                study_ids=sorted(study_ids))
            summary["tombstone"] = tombstone.pk
        else:
            transaction.set_rollback(True)
    if apply and files:
        summary["media"] = media_files_erase(paths=files, external_id=target.external_id,
                                             replacement=target.person_key)
    logger.info("participant erasure (%s) of %s person %s: %s rows in %s tables (%s imported participants, %s "
                "imported ratings), %s files", "applied" if apply else "dry run", platform, target.person_key,
                sum(counts.values()), len(counts), imported["participants"], imported["ratings"], len(files))
    return summary


# --- what the erasure leaves: tombstones -------------------------------------------------------------------------

def erasure_tombstone_for(*, platform: str, external_id: str) -> ErasureTombstone | None:
    """The tombstone of the person with this raw id on this platform, if they asked for erasure."""
    if not external_id:
        return None
    key = person_key(platform=platform, external_id=external_id)
    return ErasureTombstone.objects.filter(person_key=key).order_by("-erased_at").first()


def erased_person_keys(*, external_ids: Iterable[str], platforms: Iterable[str] = KNOWN_PLATFORMS) -> dict[str, str]:
    """Raw id -> person key, for those of `external_ids` that have a tombstone on any of `platforms`."""
    keys = {person_key(platform=p, external_id=i): i for i in set(external_ids) if i for p in platforms}
    found = ErasureTombstone.objects.filter(person_key__in=list(keys)).values_list("person_key", flat=True)
    return {keys[k]: k for k in found}


def erasures_after(*, study_id: int, at: datetime | None) -> int:
    """How many erasures touched the study after `at` (a run, filter or export made then is "computed before n
    erasures")."""
    if at is None:
        return 0
    # In Python: JSON containment is PostgreSQL's, and the demo runs on SQLite; tombstones are few.
    return sum(study_id in (ids or []) for ids in
               ErasureTombstone.objects.filter(erased_at__gt=at).values_list("study_ids", flat=True))


def erasures_of_study(*, study_id: int) -> int:
    """How many participants' data was erased on request from this study (the dataset card states it)."""
    return sum(study_id in (ids or []) for ids in ErasureTombstone.objects.values_list("study_ids", flat=True))


def computed_before_text(n: int) -> str:
    return f"computed before {n} erasure{'s' if n != 1 else ''}" if n else ""


# --- the background job of the API door -----------------------------------------------------------------------

def participant_erase_start(*, platform: str, external_id: str, apply: bool, requested_by: str = "",
                            reason: str = "") -> Any:
    """Check the request (a dry run: an unknown id is a 404 here, with nothing queued), then queue the erasure.

    The raw id is a job parameter only until the job has run: the erasure's own sweep rewrites it in the job row
    with the person key, and `participant_erase_execute` replaces it in a `finally` when the erasure fails, so no
    finished job holds it (it is not stored encrypted: the row needs it only for the minutes until a worker runs)."""
    participant_erase(platform=platform, external_id=external_id, apply=False)
    with transaction.atomic():
        job = job_create(kind="participant_erase", created_by=requested_by, params={
            "platform": platform, "external_id": external_id.strip(), "apply": bool(apply),
            "reason": reason[:300], "requested_by": requested_by})
        job_enqueue(job=job, task="core.participant_erase")
    return job


def participant_erase_execute(*, job: Any) -> dict[str, Any]:
    params = dict(job.params)
    platform, external_id = params.get("platform", ""), params.get("external_id", "")
    try:
        return participant_erase(platform=platform, external_id=external_id, apply=bool(params.get("apply")),
                                 requested_by=params.get("requested_by", ""), reason=params.get("reason", ""))
    finally:
        if external_id and not is_pseudonym(external_id) and platform in ERASABLE_PLATFORMS:
            Job.objects.filter(pk=job.pk).update(
                params={**params, "external_id": person_key(platform=platform, external_id=external_id)})
