"""python manage.py export_responses --study SLUG --format csv|jsonl --out PATH"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.services.exports import FORMATS, responses_export
from core.commands import JsonCommand


class Command(JsonCommand):
    help = "Export a study's raw responses, one row per answer (CSV or JSONL)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", required=True)

    def run(self, **options: Any) -> dict[str, Any]:
        return responses_export(slug=options["study"], fmt=options["format"], out=Path(options["out"]))
