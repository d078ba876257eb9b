"""python manage.py build_corpus_from_rewrites --study SLUG --name CORPUS --component formality [--seed 1]
[--splits 0.8,0.1,0.1] [--references all|first] [--rewrite-side 1|2] [--replace] [--exclude-flagged all|SIGNAL,…]"""
from __future__ import annotations

from typing import Any

from annotation.services.rewrite_corpus import corpus_build_from_rewrites
from core.commands import JsonCommand


class Command(JsonCommand):
    help = ("Turn the accepted rewrites of a rewrite study into a parallel corpus (one pair per source and rewrite, "
            "multi-reference kept, writer and review on each pair, seeded train/tune/test splits by source).")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--name", required=True, help="Name of the new corpus.")
        parser.add_argument("--component", required=True, help="Style component (its labels name the two sides).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the split by source.")
        parser.add_argument("--splits", default="0.8,0.1,0.1", help="train,tune,test fractions of the sources.")
        parser.add_argument("--references", default="all", choices=["all", "first"],
                            help="Every accepted rewrite of a source, or only its first (one pair per source).")
        parser.add_argument("--rewrite-side", type=int, choices=[1, 2],
                            help="Side of the rewrites (default: from the items' target_style).")
        parser.add_argument("--split-by", default="", help="persona.ATTRIBUTE: a two-style corpus whose styles are "
                                                             "the component's two labels as values of ATTRIBUTE.")
        parser.add_argument("--replace", action="store_true")
        parser.add_argument("--exclude-flagged", default="", metavar="all|SIGNAL[,SIGNAL]",
                            help="Leave out accepted rewrites flagged by these writing signals (all: any signal).")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("pairs") as progress:
            corpus = corpus_build_from_rewrites(
                study_slug=options["study"], name=options["name"], component=options["component"],
                seed=options["seed"], splits=options["splits"], references=options["references"],
                rewrite_side=options["rewrite_side"], split_by=options["split_by"], replace=options["replace"],
                exclude_flagged=options["exclude_flagged"], progress=progress)
        return {"corpus": corpus.name, "component": corpus.component.name, "pairs": corpus.n_pairs,
                **corpus.import_params}
