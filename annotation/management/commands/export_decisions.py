"""python manage.py export_decisions --study SLUG [--format prolific|mturk] --out PATH"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.services.exports import DECISION_FORMATS, decisions_export
from core.commands import JsonCommand


class Command(JsonCommand):
    help = ("Export the approve / reject / return decision for every participant of a study, with its reason, as a "
            "CSV for Prolific's bulk actions (one row per participant) or MTurk's batch results (one per assignment).")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", choices=DECISION_FORMATS, default="prolific")
        parser.add_argument("--out", required=True)

    def run(self, **options: Any) -> dict[str, Any]:
        return decisions_export(slug=options["study"], fmt=options["format"], out=Path(options["out"]))
