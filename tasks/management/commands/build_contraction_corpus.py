"""`build_contraction_corpus`: (expanded, contracted) pairs for the contraction component from plain sentences."""
from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from tasks.services.builders import contraction_corpus_build


class Command(JsonCommand):
    help = (
        "Build a `contraction` corpus from a UTF-8 file of sentences (one a line) with STEL's contraction "
        "dictionary (appendix C.1), as STEL built it: sentences that already contain an apostrophe have their "
        "expandable phrases contracted; ambiguous sentences are skipped and counted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", metavar="SENTENCES.txt")
        parser.add_argument("--name", required=True, help="Name of the corpus to create.")
        parser.add_argument("--replace", action="store_true", help="Overwrite a corpus of the same name.")
        parser.add_argument("--allow-no-apostrophe", action="store_true",
                            help="Also use sentences without an apostrophe (STEL required one, so that the "
                                 "apostrophe alone cannot tell the expanded side from the contracted one).")
        parser.add_argument("--both-directions", action="store_true",
                            help="Also expand sentences that have contractions (STEL only contracted).")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("converting sentences") as converting, self.progress_bar("storing pairs") as storing:
            result = contraction_corpus_build(
                name=options["name"], path=options["path"], replace=options["replace"],
                require_apostrophe=not options["allow_no_apostrophe"], both_directions=options["both_directions"],
                progress=storing, convert_progress=converting,
            )
        return result.summary()
