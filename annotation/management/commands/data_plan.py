"""python manage.py data_plan --study SLUG [--out FILE]: a data-management-plan section (Markdown) for an ethics
application, generated from the study's facts (annotation.services.data_plan)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.error_codes import UNKNOWN_STUDY
from annotation.models import Study
from annotation.services.data_plan import data_plan_markdown
from core.commands import JsonCommand
from core.errors import ApplicationError


class Command(JsonCommand):
    help = ("Write a data-management-plan section (Markdown) for a study: what is collected, storage, retention, who "
            "may see personal data, pseudonymisation, erasure and consent versions; to stdout or --out FILE.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="The study's slug.")
        parser.add_argument("--out", help="Write the Markdown to this file instead of stdout.")

    def run(self, **options: Any) -> dict[str, Any]:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise ApplicationError(f"No study with slug {options['study']!r}.", code=UNKNOWN_STUDY, status=404,
                                   field="study")
        text, facts = data_plan_markdown(study=study)
        if options["out"]:
            Path(options["out"]).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text)
        return {"study": study.slug, "out": options["out"] or "stdout", "characters": len(text),
                "retention_days": facts["consent"]["retention_days"],
                "special_category_questions": len(facts["consent"]["special"]),
                "consent_versions": len(facts["consent_versions"])}
