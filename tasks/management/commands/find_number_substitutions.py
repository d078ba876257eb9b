"""`find_number_substitutions`: list sentences that may use number substitutions, for review in the admin."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from core.commands import JsonCommand
from core.errors import ApplicationError
from tasks.error_codes import CANNOT_WRITE
from tasks.services.number_substitutions import nsubs_candidates_load, nsubs_candidates_write_tsv, nsubs_file_scan


class Command(JsonCommand):
    help = (
        "List the sentences of a UTF-8 text file (one a line) with number substitutions such as '4ever', 'd00d' "
        "or words of STEL's seed list (appendix C.2). Candidates go to --out as TSV (else to stdout before the "
        "summary line); --load stores them for review and translation in the admin."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", metavar="FILE.txt")
        parser.add_argument("--out", metavar="CANDIDATES.tsv", help="Write the candidates to this TSV file.")
        parser.add_argument("--load", action="store_true", help="Store the candidates in the review table.")

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("scanning lines") as progress:
            scan = nsubs_file_scan(path=options["path"], progress=progress)
        out = options.get("out")
        if out:
            try:
                with Path(out).open("w", encoding="utf-8", newline="") as handle:
                    nsubs_candidates_write_tsv(scan=scan, out=handle)
            except OSError as exc:
                raise ApplicationError(f"{out}: cannot write ({exc.strerror})", code=CANNOT_WRITE) from None
        else:
            nsubs_candidates_write_tsv(scan=scan, out=self.stdout if self.stdout else sys.stdout)
        summary = scan.summary()
        summary["out"] = out
        if options["load"]:
            created, existing = nsubs_candidates_load(scan=scan)
            summary.update(loaded=created, already_loaded=existing)
        return summary
