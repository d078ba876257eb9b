import argparse
from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from tasks.services.imports import FORMATS, corpus_import
from tasks.services.normalization import NORMALIZERS


class Command(JsonCommand):
    help = "Import a parallel corpus (aligned files, TurkCorpus TSV, CSV/TSV/JSONL pairs, or STEL's TSV export)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--name", required=True)
        parser.add_argument("--component", help="Style component (formality, simplicity, …); optional for stel.")
        parser.add_argument("--format", required=True, choices=FORMATS, dest="import_format")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the TurkCorpus simplification draw.")
        parser.add_argument("--min-edit-distance", type=int, default=None,
                            help="Pair test of every format: drop pairs whose character edit distance is below this "
                                 "(default: STEL's 4 for a dimension, 0 for a characteristic), as well as empty, "
                                 "identical and substring pairs.")
        parser.add_argument("--detokenize", action=argparse.BooleanOptionalAction, default=None,
                            help="Undo word tokenization (`Sudan .` → `Sudan.`) before the pair test; on by default "
                                 "for turkcorpus, off for the other formats.")
        parser.add_argument("--normalizer", choices=sorted(NORMALIZERS), default="moses",
                            help="moses: sacremoses with STEL's extra steps (default); stel: STEL's own mapping.")
        parser.add_argument("--replace", action="store_true", help="Overwrite a corpus of the same name.")
        parser.add_argument("--source", default="", help="Citation or description of the source.")
        parser.add_argument("--licence", default="", help="Licence note of the source data.")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("storing pairs") as progress:
            corpus, summary = corpus_import(
                name=options["name"], component=options["component"], import_format=options["import_format"],
                paths=options["paths"], seed=options["seed"], min_edit_distance=options["min_edit_distance"],
                detokenize=options["detokenize"], normalizer=options["normalizer"],
                replace=options["replace"], source=options["source"], licence=options["licence"], progress=progress,
            )
        return {"corpus_id": corpus.pk, **summary}
