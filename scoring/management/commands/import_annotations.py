"""python manage.py import_annotations --study SLUG --question NAME --scale SCALE [--level L] FILE.csv"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from scoring.agreement.imports import annotations_import


class Command(JsonCommand):
    help = "Import annotations collected elsewhere (long-format CSV: item, annotator, value[, question, item_text, " \
           "correct]) into a study."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="Study slug (created when missing).")
        parser.add_argument("--question", required=True, help="Question name, e.g. style.")
        parser.add_argument("--scale", required=True, help="MIN-MAX (e.g. 1-5) or categories (e.g. S1-S2,S2-S1).")
        parser.add_argument("--level", default="", choices=["", "nominal", "ordinal", "interval", "ratio"])
        parser.add_argument("file", help="CSV (or TSV) file in long format.")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("import") as progress:
            return annotations_import(study_slug=options["study"], question=options["question"],
                                      scale=options["scale"], level=options["level"], path=Path(options["file"]),
                                      progress=progress)
