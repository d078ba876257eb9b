"""python manage.py erase_participant --platform prolific --id ID [--apply] [--reason TEXT]: one person's data
erased from every study (core/erasure.py), with the imported annotators stored under the same id (`--platform
imported`: only those). A dry run by default: what would go, table by table, and how many imported participants and
ratings."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.erasure import ERASABLE_PLATFORMS, participant_erase


class Command(JsonCommand):
    help = ("Erase one participant's data across every study, with the ratings imported under the same id (dry run "
            "unless --apply).")
    cli_fields = {"external_id": "id"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--platform", required=True, choices=ERASABLE_PLATFORMS,
                            help="The platform the id is from. prolific, mturk, anonymous: that platform's participant "
                                 "and every imported annotator with the same id (import_annotations' annotator column "
                                 "or --rater-ids); imported: only imported annotators.")
        parser.add_argument("--id", required=True, help="The participant's platform id (PROLIFIC_PID, WorkerId), or "
                                                        "an imported annotator's id.")
        parser.add_argument("--apply", action="store_true", help="Erase; without it nothing changes.")
        parser.add_argument("--reason", default="", help="Why, e.g. 'withdrawal request of 2026-11-27'.")
        parser.add_argument("--requested-by", default="", help="Who asked (kept on the tombstone).")

    def run(self, **options: Any) -> dict[str, Any]:
        return participant_erase(platform=options["platform"], external_id=options["id"], apply=options["apply"],
                                 requested_by=options["requested_by"], reason=options["reason"])
