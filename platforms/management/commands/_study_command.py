"""The shared shape of the platform commands: --study SLUG, the service, the JSON summary line."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from platforms.models import PlatformStudy
from platforms.services.accounts import platform_study_get, study_get


class PlatformStudyCommand(JsonCommand):
    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True, help="The StyleCrowd study's slug.")

    def platform_study(self, slug: str) -> PlatformStudy:
        return platform_study_get(study=study_get(slug=slug))
