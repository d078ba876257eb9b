"""python manage.py retention_apply [--study SLUG] [--apply]

Studies past their retention period (closed, payments settled, retention_days passed): raw platform ids become person
keys, persona answers, eligibility answers and telemetry detail are deleted. A dry run by default: what would change,
per study; --apply changes it. The daily beat task does the same with --apply."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from platforms.services.retention import retention_apply, retention_study_get


class Command(JsonCommand):
    help = "Apply the retention period to closed, settled studies (dry run unless --apply)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", default="", help="One study's slug (default: every closed study).")
        parser.add_argument("--apply", action="store_true", help="Change the data (default: a dry run).")

    def run(self, **options: Any) -> dict[str, Any]:
        study = retention_study_get(slug=options["study"]) if options["study"] else None
        return retention_apply(apply=options["apply"], study=study)
