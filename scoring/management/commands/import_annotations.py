"""python manage.py import_annotations --study SLUG --question NAME --scale SCALE [--level L] FILE.csv

Ratings of rewrites with their texts (a Likert study evaluate_metrics reads):

    import_annotations --study SLUG --items ITEMS.jsonl --scale 1-5 --level ordinal RATINGS.csv
    import_annotations --study SLUG --wide [--columns source=input,...] [--raters c=content_preservation,...]
        [--rater-ids prolificID] [--dataset NAME] --scale 1-5 WIDE.csv
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from scoring.agreement.imports import annotations_import
from scoring.agreement.rating_imports import RatingsImport, WideMapping, ratings_import


class Command(JsonCommand):
    help = "Import annotations collected elsewhere (long-format CSV: item, annotator, value[, question, item_text, " \
           "correct]) into a study; with --items or --wide, ratings of rewrites with their texts."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="Study slug (created when missing).")
        parser.add_argument("--question", default="", help="Question name for rows without a question column.")
        parser.add_argument("--scale", required=True, help="MIN-MAX (e.g. 1-5) or categories (e.g. S1-S2,S2-S1).")
        parser.add_argument("--level", default="", choices=["", "nominal", "ordinal", "interval", "ratio"])
        parser.add_argument("--items", default="", help="Items file (JSONL/CSV: id, source, rewrite[, reference, "
                                                        "system, target_style, dataset]): a Likert study of rewrites.")
        parser.add_argument("--wide", action="store_true", help="FILE is one row per rewrite with one column per "
                                                                 "rater per question (Pauli et al.'s release).")
        parser.add_argument("--columns", default="", help="Wide file's column mapping, e.g. source=input,"
                                                          "rewrite=output,reference=reference,target_style=style_to,"
                                                          "system=system,id=id,dataset=dataset (these are the "
                                                          "defaults).")
        parser.add_argument("--raters", default="", help="Wide file's rater column prefixes: PREFIX=QUESTION, e.g. "
                                                         "c=content_preservation,s=style_strength,f=fluency (the "
                                                         "default); columns PREFIX-1, PREFIX-2, ... are raters.")
        parser.add_argument("--rater-ids", default="", help="With --wide only (refused without it): the wide file's "
                                                            "columns holding each rater's own id (e.g. a Prolific id): "
                                                            "a prefix, e.g. prolificID (columns prolificID_1, "
                                                            "prolificID_2, ... name the raters of the rating columns "
                                                            "ending in _1, _2, ...), or the columns, e.g. "
                                                            "WorkerId_1,WorkerId_2,WorkerId_3. Without it raters are "
                                                            "column positions (rater-1, ...). The ids leave the "
                                                            "database as pseudonyms only; erase_participant erases "
                                                            "the ratings of an id with its platform's participant.")
        parser.add_argument("--dataset", default="", help="Dataset name of every item (where no column gives it).")
        parser.add_argument("--language", default="", help="Language (BCP-47) of every item's texts (where no "
                                                           "column gives it); metrics for other languages refuse.")
        parser.add_argument("file", help="CSV (or TSV) file of ratings.")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("import") as progress:
            wide = WideMapping.of_options(wide=options["wide"], columns=options["columns"],
                                          raters=options["raters"], rater_ids=options["rater_ids"])
            if options["items"] or wide is not None:
                request = RatingsImport(
                    study_slug=options["study"], scale=options["scale"], level=options["level"],
                    ratings_path=Path(options["file"]), items_path=Path(options["items"]) if options["items"] else None,
                    wide=wide, dataset=options["dataset"], language=options["language"], question=options["question"])
                return ratings_import(request=request, progress=progress)
            return annotations_import(study_slug=options["study"], question=options["question"],
                                      scale=options["scale"], level=options["level"], path=Path(options["file"]),
                                      progress=progress)
