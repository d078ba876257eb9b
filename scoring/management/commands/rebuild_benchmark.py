"""python manage.py rebuild_benchmark IDS_FILE --out PATH [--format stel-tsv|jsonl|parquet] [--corpus OLD=NEW]"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from scoring.export.formats import FILE_FORMATS
from scoring.export.rebuild import benchmark_rebuild
from tasks.error_codes import INVALID_VALUE


class Command(JsonCommand):
    help = ("Put the texts back into an ids-only export from your own copy of its corpora (imported as the card's "
            "recipe says); every row is checked against its text_sha256. The export's per-annotator votes table, "
            "where it wrote one beside the ids-only file, is written beside the output the same way.")
    cli_fields = {"corpus_map": "corpus"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("ids_file", help="The ids-only export (JSONL or Parquet).")
        parser.add_argument("--out", required=True)
        parser.add_argument("--format", default="stel-tsv", choices=FILE_FORMATS)
        parser.add_argument("--corpus", action="append", default=[], metavar="OLD=NEW",
                            help="Your corpus NEW holds what the export calls OLD (repeatable).")

    def run(self, **options: Any) -> dict[str, Any]:
        mapping = {}
        for item in options["corpus"]:
            old, sep, new = item.partition("=")
            if not sep or not old.strip() or not new.strip():
                raise ApplicationError(f"--corpus takes OLD=NEW, not {item!r}", code=INVALID_VALUE)
            mapping[old.strip()] = new.strip()
        summary = benchmark_rebuild(ids_path=Path(options["ids_file"]), out=Path(options["out"]),
                                    fmt=options["format"], corpus_map=mapping)
        return {"ok": True, **summary}
