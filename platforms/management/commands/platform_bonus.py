"""python manage.py platform_bonus --study SLUG [--flat AMOUNT [--label L]] [--rule KIND=AMOUNT] [--apply]

Bonuses from the study's rules (per accepted rewrite, per correct known-answer item, flat) and, with --flat, the
same amount for each approved participant. A dry run by default; --apply writes the ledger rows, then pays them
(Prolific: set up, then pay once; MTurk: SendBonus with the row's id as UniqueRequestToken). Caps are checked before
anything is written or sent; a call whose outcome is unknown stops the run and is never repeated automatically.
--ledger FILE writes the study's ledger as CSV."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from platforms.management.commands._study_command import PlatformStudyCommand
from platforms.services.bonuses import bonus_caps_set, bonus_rule_add, ledger_csv, platform_bonus


class Command(PlatformStudyCommand):
    help = "Compute and (with --apply) pay the study's bonuses, once."

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument("--flat", default=None, help="The same bonus for each approved participant.")
        parser.add_argument("--label", default="flat", help="Names a flat bonus; the same label is paid once.")
        parser.add_argument("--rule", action="append", default=[],
                            help="Add a rule: per_accepted_rewrite=0.10, per_correct_item=0.02 or flat=0.50.")
        parser.add_argument("--cap-per-participant", default=None,
                            help="Set the study's cap per participant (all bonuses together), checked before sending.")
        parser.add_argument("--cap-per-study", default=None, help="Set the study's cap on all bonuses together.")
        parser.add_argument("--apply", action="store_true", help="Write the ledger rows and pay them.")
        parser.add_argument("--no-sync", action="store_true", help="Use the submissions as last synced.")
        parser.add_argument("--ledger", default="", help="Write the study's ledger (CSV) to this file.")

    def run(self, **o: Any) -> dict[str, Any]:
        platform_study = self.platform_study(o["study"])
        if o["cap_per_participant"] is not None or o["cap_per_study"] is not None:
            bonus_caps_set(platform_study=platform_study, per_participant=o["cap_per_participant"],
                           per_study=o["cap_per_study"])
        for rule in o["rule"]:
            kind, _, amount = rule.partition("=")
            if not amount:
                raise ApplicationError(f"--rule: {rule!r} is not KIND=AMOUNT.")
            bonus_rule_add(platform_study=platform_study, kind=kind.strip(), amount=amount.strip())
        summary = platform_bonus(platform_study=platform_study, flat=o["flat"], label=o["label"], apply=o["apply"],
                                 sync=not o["no_sync"], created_by="cli")
        if o["ledger"]:
            out = Path(o["ledger"])
            if not out.parent.exists():
                raise ApplicationError(f"--ledger: directory {out.parent} does not exist.")
            out.write_text(ledger_csv(platform_study=platform_study), encoding="utf-8")
            summary["ledger_file"] = str(out)
        return summary
