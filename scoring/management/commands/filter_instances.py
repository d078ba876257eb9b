"""python manage.py filter_instances --study SLUG [--min-correct 3] [--surplus first|stel] [--balance]
[--balance-groups formality,simplicity ...] [--seed N]"""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from scoring.agreement.filtering import SURPLUS_RULES, filter_run_summary, instances_filter
from scoring.agreement.selectors import study_get


class Command(JsonCommand):
    help = "Mark a study's instances validated/rejected by the majority rule; --balance equalizes the components."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--min-correct", type=int, default=None, help="m of k (default: the study's).")
        parser.add_argument("--balance", action="store_true", help="Drop validated instances at random (seeded) "
                                                                    "until every component has the same size.")
        parser.add_argument("--balance-groups", nargs="+", default=None, metavar="C1,C2",
                            help="Balance only within each group of comma-separated components (STEL: "
                                 "formality,simplicity); implies --balance.")
        parser.add_argument("--surplus", choices=SURPLUS_RULES, default="first",
                            help="Items with more than k responses: first k in time, or STEL's rule (surplus "
                                 "correct votes removed first).")
        parser.add_argument("--seed", type=int, default=None)

    def run(self, **options: Any) -> dict[str, Any]:
        with self.progress_bar("filter") as progress:
            run = instances_filter(study=study_get(slug=options["study"]), min_correct=options["min_correct"],
                                   balance=options["balance"], seed=options["seed"], created_by="cli",
                                   balance_groups=[[name.strip() for name in group.split(",") if name.strip()]
                                                   for group in options["balance_groups"]]
                                   if options["balance_groups"] else None,
                                   surplus=options["surplus"],
                                   progress=progress)
        return filter_run_summary(run)
