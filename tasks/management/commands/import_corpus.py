import argparse
from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from core.errors import ApplicationError
from tasks.error_codes import INVALID_COMPONENT
from tasks.models import StyleComponent
from tasks.services.components import ComponentSpec
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
        parser.add_argument("--create-component", action="store_true",
                            help="Create the component if it does not exist (for stel: the style type the file "
                                 "names), in the same transaction as the corpus.")
        parser.add_argument("--component-description", default="", help="With --create-component: its description.")
        parser.add_argument("--component-labels", default=None, metavar="STYLE1,STYLE2",
                            help="With --create-component: the names of style 1 and style 2 (default: the style "
                                 "tags of the STEL IDs, else style_1,style_2).")
        parser.add_argument("--component-kind", default=StyleComponent.Kind.CHARACTERISTIC,
                            choices=StyleComponent.Kind.values,
                            help="With --create-component (default: characteristic).")
        parser.add_argument("--replace", action="store_true", help="Overwrite a corpus of the same name.")
        parser.add_argument("--source", default="", help="Citation or description of the source.")
        parser.add_argument("--licence", default="",
                            help="SPDX identifier of the source data's licence (MIT, GPL-3.0-only, CC-BY-4.0, …; "
                                 "LicenseRef-GYAFC or 'gyafc' for GYAFC; LicenseRef-not-redistributable). Default: "
                                 "MIT for stel, GPL-3.0-only for turkcorpus, GYAFC's for files named like GYAFC's.")
        parser.add_argument("--attribution", default="", help="Who to credit and cite (goes into dataset cards).")
        parser.add_argument("--language", default="en", help="BCP-47 language tag of the texts (default: en).")

    def run(self, **options: Any) -> dict[str, Any]:
        spec = None
        if options["create_component"]:
            labels = options["component_labels"]
            parts = tuple(part.strip() for part in labels.split(",")) if labels else None
            if parts is not None and len(parts) != 2:
                raise ApplicationError(f"--component-labels needs two names separated by a comma, got {labels!r}",
                                       code=INVALID_COMPONENT)
            spec = ComponentSpec(description=options["component_description"], labels=parts,
                                 kind=options["component_kind"])
        with self.progress_bar("storing pairs") as progress:
            corpus, summary = corpus_import(
                name=options["name"], component=options["component"], import_format=options["import_format"],
                paths=options["paths"], seed=options["seed"], min_edit_distance=options["min_edit_distance"],
                detokenize=options["detokenize"], normalizer=options["normalizer"], create_component=spec,
                replace=options["replace"], source=options["source"], licence=options["licence"],
                attribution=options["attribution"], language=options["language"], progress=progress,
            )
        return {"corpus_id": corpus.pk, **summary}
