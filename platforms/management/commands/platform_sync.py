"""python manage.py platform_sync --study SLUG

Reads every submission (Prolific) or assignment (MTurk) of the study, all pages, maps each to its participant,
frees the slots of RETURNED / TIMED-OUT submissions at once and reports people the platform knows and StyleCrowd
does not. Reads only."""
from __future__ import annotations

from typing import Any

from platforms.management.commands._study_command import PlatformStudyCommand
from platforms.services.sync import platform_sync


class Command(PlatformStudyCommand):
    help = "Read the study's submissions from its platform and apply them."

    def run(self, **o: Any) -> dict[str, Any]:
        bar = self.progress(desc="submissions")

        def report(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        try:
            return platform_sync(platform_study=self.platform_study(o["study"]), progress=report)
        finally:
            bar.close()
