"""python manage.py export_benchmark --format {stel-tsv,jsonl,parquet} [--corpus] [--component] [--setup]
[--status candidate|validated|all] [--study SLUG] --out PATH"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from scoring.export.formats import FORMATS, STATUSES, benchmark_export


class Command(JsonCommand):
    help = "Export task instances as STEL TSV, JSONL or Parquet, with a dataset card (JSON + Markdown) beside it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--corpus", default="")
        parser.add_argument("--component", default="")
        parser.add_argument("--setup", default="")
        parser.add_argument("--status", default="all", choices=STATUSES)
        parser.add_argument("--study", default="", help="Only this study's instances; votes from its responses.")
        parser.add_argument("--out", required=True)

    def run(self, **options: Any) -> dict[str, Any]:
        export = benchmark_export(fmt=options["format"], out=Path(options["out"]), corpus=options["corpus"],
                                  component=options["component"], setup=options["setup"], status=options["status"],
                                  study_slug=options["study"], created_by="cli")
        return {"export": export.pk, "path": export.path, "card": export.card_path, "format": export.format,
                "rows": export.n_rows, "sha256": export.sha256, **{k: v for k, v in export.counts.items()
                                                                    if k != "rows"}}
