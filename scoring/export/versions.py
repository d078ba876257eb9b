"""Versions of a benchmark: each export of a name gets one, and a changelog against the version before it.

The version is semantic (Croissant and the hub expect MAJOR.MINOR.PATCH) and says what a score on it is comparable
to: instances dropped or relabelled → next major (scores on the old version mean something else); instances added →
next minor; only votes changed (more annotation, same labels) → next patch; nothing changed → the same version
(another format, or a re-export, of the same content).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from scoring.models import BenchmarkExport

FIRST_VERSION = "1.0.0"
EXAMPLES = 10  # ids listed per kind of change; the counts are complete


def manifest_of(frame: pd.DataFrame) -> dict[str, list[int | None]]:
    """What versions compare: per row key (`corpus/id`), [correct alternative, votes or None]."""
    return {key: [int(label), None if votes < 0 else int(votes)]
            for key, label, votes in zip(frame["key"], frame["correct_alternative"], frame["votes"], strict=True)}


def previous_export(*, name: str) -> BenchmarkExport | None:
    return BenchmarkExport.objects.filter(name=name).exclude(version="").order_by("-created_at", "-id").first()


def _bump(version: str, part: str) -> str:
    try:
        major, minor, patch = (int(x) for x in version.split("."))
    except ValueError:
        major, minor, patch = 1, 0, 0
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def version_next(*, name: str, manifest: dict[str, list[int | None]]) -> tuple[str, dict[str, Any]]:
    """The version this content gets under `name`, and the changelog against the latest export of that name."""
    previous = previous_export(name=name)
    if previous is None:
        return FIRST_VERSION, {"previous_version": None, "previous_export": None, "summary": "first version",
                               "added": len(manifest), "dropped": 0, "relabelled": 0, "votes_changed": 0,
                               "examples": {}}
    before = previous.manifest or {}
    added = sorted(set(manifest) - set(before))
    dropped = sorted(set(before) - set(manifest))
    common = set(manifest) & set(before)
    relabelled = sorted(key for key in common if manifest[key][0] != before[key][0])
    votes_changed = sorted(key for key in common if manifest[key][0] == before[key][0]
                           and manifest[key][1] != before[key][1])
    if dropped or relabelled:
        version, kind = _bump(previous.version, "major"), "major"
    elif added:
        version, kind = _bump(previous.version, "minor"), "minor"
    elif votes_changed:
        version, kind = _bump(previous.version, "patch"), "patch"
    else:
        version, kind = previous.version, "none"
    parts = [f"{len(added)} instance(s) added", f"{len(dropped)} dropped", f"{len(relabelled)} relabelled",
             f"{len(votes_changed)} with changed votes"]
    summary = (f"no change since {previous.version}" if kind == "none" else
               f"since {previous.version} (export #{previous.pk}): " + ", ".join(parts))
    return version, {
        "previous_version": previous.version, "previous_export": previous.pk, "change": kind, "summary": summary,
        "added": len(added), "dropped": len(dropped), "relabelled": len(relabelled),
        "votes_changed": len(votes_changed),
        "examples": {"added": added[:EXAMPLES], "dropped": dropped[:EXAMPLES], "relabelled": relabelled[:EXAMPLES],
                     "votes_changed": votes_changed[:EXAMPLES]},
    }
