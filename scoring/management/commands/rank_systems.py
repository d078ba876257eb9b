"""python manage.py rank_systems --study SLUG: per-system mean rank of a ranking study (GYAFC's overall ranking)."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from scoring.agreement.selectors import study_get
from scoring.ranking import ranking_summary


class Command(JsonCommand):
    help = "Each system's mean rank (1 = best) over every judgment of a ranking study, and ordinal alpha on ranks."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)

    def run(self, **options: Any) -> dict[str, Any]:
        summary = ranking_summary(study=study_get(slug=options["study"]))
        for row in summary["systems"]:
            self.stderr.write(f"{row['system']:24} mean rank {row['mean_rank']:.3f}  ({row['judgments']} judgments)")
        return summary
