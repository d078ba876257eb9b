"""python manage.py platform_decide --study SLUG [--apply] [--reject-message TEXT] [--retry-failed]

Sends StyleCrowd's decisions through the platform: approvals (Prolific: bulk-approve), rejections (with Prolific's
category and a message of at least 100 characters written from the evidence), return requests, screen-outs. A dry
run by default, printing exactly what would be sent; --apply sends (on the command line it is the confirmation the
rejections need). Each decision is sent once: running it again sends nothing new."""
from __future__ import annotations

from typing import Any

from platforms.management.commands._study_command import PlatformStudyCommand
from platforms.services.decisions import platform_decide


class Command(PlatformStudyCommand):
    help = "Send approve / reject / return decisions through the platform's API (dry run unless --apply)."

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument("--apply", action="store_true", help="Send the decisions (and confirm rejections).")
        parser.add_argument("--reject-message", default="", help="Your own rejection message (100+ characters).")
        parser.add_argument("--retry-failed", action="store_true", help="Send again decisions the platform refused.")
        parser.add_argument("--no-sync", action="store_true", help="Use the submissions as last synced.")

    def run(self, **o: Any) -> dict[str, Any]:
        return platform_decide(platform_study=self.platform_study(o["study"]), apply=o["apply"],
                               confirm_rejections=o["apply"], reject_message=o["reject_message"],
                               retry_failed=o["retry_failed"], sync=not o["no_sync"], created_by="cli")
