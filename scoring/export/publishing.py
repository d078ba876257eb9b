"""benchmark_publish: a hub export uploaded to a dataset repository, as a row first (what, where, by whom) and the
upload second; its outcome (published, failed, or unknown when the hub did not answer) is written back to the row."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from django.utils import timezone

from core.errors import ApplicationError
from scoring.error_codes import (
    EXPORT_CHANGED,
    INVALID_HUB,
    INVALID_REPO,
    LICENCE_NOT_RECORDED,
    NOT_A_HUB_EXPORT,
    NOT_REDISTRIBUTABLE,
)
from scoring.export.hub_client import HubOutcomeUnknown, hub_endpoint, hub_token, hub_upload_folder
from scoring.models import BenchmarkExport, BenchmarkPublication
from tasks.licences import licence_get

HUBS = ("huggingface",)
REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def publication_check(*, export: BenchmarkExport, hub: str, repo: str) -> Path:
    """What must hold before anything leaves the server: a hub folder, intact, with every licence recorded and
    redistributable (or ids only)."""
    if hub not in HUBS:
        raise ApplicationError(f"To: one of {', '.join(HUBS)}, not '{hub}'", code=INVALID_HUB, field="hub")
    if not REPO.match(repo or ""):
        raise ApplicationError(f"Repo: '{repo}' must be ORG/NAME (letters, digits, '.', '_', '-')",
                               code=INVALID_REPO, field="repo")
    if export.format != BenchmarkExport.Format.HUB:
        raise ApplicationError(f"Export #{export.pk} is {export.get_format_display()}; publish a hub export "
                               "(export_benchmark --format hub)", code=NOT_A_HUB_EXPORT, field="export")
    folder = Path(export.path)
    for entry in export.files:
        path = folder / entry["path"]
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            raise ApplicationError(f"Export #{export.pk}: {entry['path']} is missing or changed since the export "
                                   "(sha256); export again", code=EXPORT_CHANGED, status=409)
    unrecorded = [i for i, licence in enumerate(export.licences) if not licence]
    if unrecorded:
        raise ApplicationError(f"Export #{export.pk} has text from a corpus without a recorded licence: record it "
                               "(admin, API or import_corpus --licence) and export again before publishing",
                               code=LICENCE_NOT_RECORDED, field="export")
    if not export.ids_only and any(licence_get(i) and not licence_get(i).redistributable for i in export.licences):
        raise ApplicationError("Licence: this export holds text that may not be redistributed",
                               code=NOT_REDISTRIBUTABLE, field="export")
    return folder


def benchmark_publish(*, export: BenchmarkExport, hub: str = "huggingface", repo: str, private: bool = False,
                      created_by: str = "") -> BenchmarkPublication:
    folder = publication_check(export=export, hub=hub, repo=repo)
    token = hub_token()  # no token: refused before the row, so nothing is written
    publication = BenchmarkPublication.objects.create(export=export, hub=hub, repo=repo, endpoint=hub_endpoint(),
                                                      private=private, created_by=created_by)
    message = f"{export.name} {export.version} (StyleCrowd export #{export.pk})"
    try:
        commit = hub_upload_folder(folder=folder, repo=repo, token=token, private=private, message=message)
    except HubOutcomeUnknown as exc:
        _finish(publication, BenchmarkPublication.State.UNKNOWN, error=exc.message)
        raise
    except ApplicationError as exc:
        _finish(publication, BenchmarkPublication.State.FAILED, error=exc.message)
        raise
    publication.commit_url, publication.commit_oid = commit.url, commit.oid
    _finish(publication, BenchmarkPublication.State.DONE)
    return publication


def _finish(publication: BenchmarkPublication, state: str, *, error: str = "") -> None:
    publication.state, publication.error, publication.finished_at = state, error, timezone.now()
    publication.save(update_fields=["state", "error", "finished_at", "commit_url", "commit_oid"])
