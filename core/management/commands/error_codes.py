"""The error-code catalogue: print it, write it into docs/errors.md, or check that the docs and the source agree."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core import error_catalogue
from core.commands import JsonCommand
from core.error_codes import ERROR_CODES_STALE
from core.errors import ApplicationError


class Command(JsonCommand):
    help = ("Error codes per app (each app's error_codes.py): --markdown prints the docs' table, --write writes it "
            "into docs/errors.md, --check exits 1 when docs/errors.md is stale or the source spells a code as a "
            "string literal, uses an undeclared one, or never raises a declared one.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--markdown", action="store_true", help="print the generated table on standard output")
        parser.add_argument("--write", action="store_true", help="write the table into docs/errors.md")
        parser.add_argument("--check", action="store_true", help="exit 1 if the docs or the source disagree")

    def run(self, **options: Any) -> dict[str, Any]:
        sites = error_catalogue.scan()
        declared = error_catalogue.declarations()
        block = error_catalogue.markdown(sites)
        docs = error_catalogue.ROOT / error_catalogue.DOCS
        text = docs.read_text(encoding="utf-8")
        if options["markdown"]:
            self.stdout.write(block)
        if options["write"]:
            try:
                updated = error_catalogue.docs_updated(text, block)
            except ValueError as exc:
                raise ApplicationError(str(exc), code=ERROR_CODES_STALE) from None
            if updated != text:
                docs.write_text(updated, encoding="utf-8")
            text = updated
        problems = error_catalogue.problems(sites)
        docs_current = error_catalogue.docs_block(text) == block
        summary = {"codes": len(declared), "sites": len(sites), "docs": str(Path(error_catalogue.DOCS)),
                   "docs_current": docs_current, "written": bool(options["write"]), "problems": len(problems)}
        if options["check"] and (problems or not docs_current):
            shown = problems[:20] + ([f"… and {len(problems) - 20} more"] if len(problems) > 20 else [])
            if not docs_current:
                shown.insert(0, f"{error_catalogue.DOCS} is stale: run python manage.py error_codes --write")
            raise ApplicationError("Error codes: " + "; ".join(shown), code=ERROR_CODES_STALE,
                                   details={**summary, "problems": problems})
        return summary
