"""python manage.py platform_message --study SLUG --body TEXT [--subject S] [--to ID …] [--apply]

Messages one participant (--to) or all of the study's participants on the platform (Prolific messages; MTurk
NotifyWorkers, 100 workers a call). A dry run by default; --apply sends; the text is stored with each call, and
someone who already got the same text is skipped unless --resend."""
from __future__ import annotations

from typing import Any

from platforms.management.commands._study_command import PlatformStudyCommand
from platforms.services.messages import platform_message


class Command(PlatformStudyCommand):
    help = "Message participants of the study through the platform (dry run unless --apply)."

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument("--body", required=True)
        parser.add_argument("--subject", default="")
        parser.add_argument("--to", nargs="*", default=None, help="Participant ids (default: everyone).")
        parser.add_argument("--apply", action="store_true")
        parser.add_argument("--resend", action="store_true", help="Also people who got this text already.")

    def run(self, **o: Any) -> dict[str, Any]:
        return platform_message(platform_study=self.platform_study(o["study"]), body=o["body"],
                                subject=o["subject"], to=o["to"], apply=o["apply"], resend=o["resend"],
                                created_by="cli")
