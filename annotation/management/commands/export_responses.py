"""python manage.py export_responses --study SLUG --format csv|jsonl --out PATH [--salt SALT] [--raw-ids]"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.services.exports import FORMATS, responses_export
from core.commands import JsonCommand


class Command(JsonCommand):
    help = ("Export a study's responses, one row per answer (CSV or JSONL). Participants are keyed pseudonyms unless "
            "--raw-ids (written to the personal-data access log).")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", required=True)
        parser.add_argument("--salt", default="",
                            help="release salt: another pseudonym per participant, so two releases cannot be joined "
                                 "unless they share it")
        parser.add_argument("--raw-ids", action="store_true",
                            help="the participants' platform ids instead of pseudonyms (logged as personal-data "
                                 "access)")

    def run(self, **options: Any) -> dict[str, Any]:
        return responses_export(slug=options["study"], fmt=options["format"], out=Path(options["out"]),
                                raw_ids=options["raw_ids"], salt=options["salt"], door="cli")
