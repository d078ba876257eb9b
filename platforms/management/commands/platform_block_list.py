"""python manage.py platform_block_list [--account NAME]

Makes each account's block list on the platform (Prolific participant group, MTurk qualification type) equal to the
workers blocked in StyleCrowd. Blocking someone in the review queue queues this by itself."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from platforms.models import PlatformAccount
from platforms.services.accounts import account_get
from platforms.services.lists import block_list_sync


class Command(JsonCommand):
    help = "Sync block lists on the platforms with StyleCrowd's blocked workers."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--account", default="")

    def run(self, **o: Any) -> dict[str, Any]:
        accounts = [account_get(name=o["account"])] if o["account"] else list(PlatformAccount.objects.all())
        return {"accounts": [block_list_sync(account=a) for a in accounts]}
