"""python manage.py posterior_refit --study SLUG [--force] --json: refit a study's posterior stopping rule now."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from scoring.agreement.posterior_fit import posterior_refit
from scoring.agreement.selectors import study_get


class Command(JsonCommand):
    help = "Fit the posterior stopping rule's parameters (pooled one-coin EM) on a study's answers so far, store " \
           "them and recheck its items' closures (celery beat does this every 5 minutes). Last line: the JSON summary."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--force", action="store_true", help="Fit even if the pilot is not decided yet.")
        parser.add_argument("--json", action="store_true", help="Only the JSON line (it is always the last line).")

    def run(self, **options: Any) -> dict[str, Any]:
        return posterior_refit(study=study_get(slug=options["study"]), force=options["force"])
