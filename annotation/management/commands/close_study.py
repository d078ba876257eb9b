"""python manage.py close_study --study SLUG

Closes a study: no new sessions, open sessions end now, and the retention period starts (retention_apply)."""
from __future__ import annotations

from typing import Any

from annotation.models import Study
from annotation.services.study_setup import study_close
from core.commands import JsonCommand
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError


class Command(JsonCommand):
    help = "Close a study to participants (open sessions end now); starts its retention period."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="The study's slug.")

    def run(self, **options: Any) -> dict[str, Any]:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise ApplicationError(f"Study '{options['study']}' not found.", code=NOT_FOUND, status=404, field="study")
        return study_close(study=study)
