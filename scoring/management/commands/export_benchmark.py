"""python manage.py export_benchmark --format {stel-tsv,jsonl,parquet,hub} [--corpus] [--component] [--setup]
[--status candidate|validated|rejected|all] [--study SLUG] [--name NAME] [--ids-only] --out PATH"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from scoring.export.formats import FORMATS
from scoring.export.selection import STATUSES
from scoring.export.services import benchmark_export


class Command(JsonCommand):
    help = ("Export task instances as STEL TSV, JSONL, Parquet or a Hugging Face folder (hub), with a dataset card "
            "(JSON + Markdown) and Croissant metadata, versioned per benchmark name.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--format", required=True, choices=FORMATS,
                            help="hub: --out is a folder (README.md with the hub's YAML, data/<component>/<split>"
                                 ".parquet, croissant.json, card.json).")
        parser.add_argument("--corpus", default="")
        parser.add_argument("--component", default="")
        parser.add_argument("--setup", default="")
        parser.add_argument("--status", default="all", choices=STATUSES)
        parser.add_argument("--study", default="", help="Only this study's instances; votes from its responses.")
        parser.add_argument("--name", default="",
                            help="The benchmark's name; versions and changelogs are kept per name (default: from the "
                                 "selection, e.g. STUDY-validated).")
        parser.add_argument("--ids-only", action="store_true",
                            help="Write instance ids, labels and votes without the texts, with the recipe to rebuild "
                                 "them (for corpora whose licence forbids redistribution, such as GYAFC).")
        parser.add_argument("--out", required=True)
        parser.add_argument("--salt", default="",
                            help="Release salt for the annotators' pseudonyms in the per-annotator votes table: two "
                                 "releases join on annotators only if they share it.")

    def run(self, **options: Any) -> dict[str, Any]:
        export = benchmark_export(fmt=options["format"], out=Path(options["out"]), corpus=options["corpus"],
                                  component=options["component"], setup=options["setup"], status=options["status"],
                                  study_slug=options["study"], name=options["name"], ids_only=options["ids_only"],
                                  created_by="cli", salt=options["salt"])
        return {"ok": True, "export": export.pk, "path": export.path, "card": export.card_path,
                "format": export.format, "name": export.name, "version": export.version,
                "change": export.changelog.get("summary"), "ids_only": export.ids_only, "licences": export.licences,
                "rows": export.n_rows, "files": len(export.files), "sha256": export.sha256,
                **{k: v for k, v in export.counts.items() if k != "rows"}}
