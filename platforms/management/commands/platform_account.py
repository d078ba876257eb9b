"""python manage.py platform_account create|check|list|token|webhook …

create --name lab --platform prolific (--token-env PROLIFIC_API_TOKEN | --token-stdin) [--workspace W] [--project P]
create --name turk --platform mturk [--live] [--aws-profile P] [--endpoint-url URL]
check --name lab · list · token --name lab (reads the new token from standard input)
webhook --name lab --url https://crowd.example.org/api/v1/platform-hooks/prolific/lab/

A token is never taken on the command line (it would stay in the shell's history and the process list): from an
environment variable (--token-env) or standard input (--token-stdin), stored encrypted."""
from __future__ import annotations

import sys
from typing import Any

from core.commands import JsonCommand
from core.errors import ApplicationError
from platforms.backends import DEFAULT_PLATFORM
from platforms.models import Platform, PlatformAccount
from platforms.services.accounts import account_check, account_create, account_get, account_set_token
from platforms.services.webhooks import webhook_setup


def _account_row(account: PlatformAccount) -> dict[str, Any]:
    return {"name": account.name, "platform": account.platform, "workspace_id": account.workspace_id,
            "project_id": account.project_id, "token": "from $" + account.token_env if account.token_env
            else ("stored encrypted" if account.token_encrypted else ""), "sandbox": account.sandbox
            if account.platform == Platform.MTURK else None, "block_list": account.block_list_id,
            "webhook": account.webhook_url, "checked_at": account.checked_at}


class Command(JsonCommand):
    help = "Create, check and list crowd-platform accounts (tokens never shown), and set up Prolific's webhooks."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["create", "check", "list", "token", "webhook"])
        parser.add_argument("--name", default="")
        parser.add_argument("--platform", choices=Platform.values, default=DEFAULT_PLATFORM,
                            help="mock: a platform in memory, for demos (no account needed anywhere).")
        parser.add_argument("--token-env", default="", help="Environment variable holding the Prolific token.")
        parser.add_argument("--token-stdin", action="store_true", help="Read the token from standard input.")
        parser.add_argument("--workspace", dest="workspace_id", default="")
        parser.add_argument("--project", dest="project_id", default="")
        parser.add_argument("--api-url", default="", help="Prolific's API (default settings.PROLIFIC_API_URL).")
        parser.add_argument("--live", action="store_true", help="MTurk: the live marketplace (default: sandbox).")
        parser.add_argument("--aws-profile", default="")
        parser.add_argument("--endpoint-url", default="")
        parser.add_argument("--url", default="", help="webhook: the public https URL Prolific delivers to.")
        parser.add_argument("--no-check", action="store_true", help="create: do not call the platform first.")

    def run(self, **o: Any) -> dict[str, Any]:
        action = o["action"]
        if action == "list":
            return {"accounts": [_account_row(a) for a in PlatformAccount.objects.all()]}
        if not o["name"]:
            raise ApplicationError("--name: the account's name is needed.")
        token = sys.stdin.readline().strip() if o["token_stdin"] else ""
        if action == "create":
            account = account_create(
                name=o["name"], platform=o["platform"], token=token, token_env=o["token_env"],
                workspace_id=o["workspace_id"], project_id=o["project_id"], api_url=o["api_url"],
                sandbox=not o["live"], aws_profile=o["aws_profile"], endpoint_url=o["endpoint_url"],
                check=not o["no_check"])
            return {"created": _account_row(account)}
        account = account_get(name=o["name"])
        if action == "check":
            return account_check(account=account)
        if action == "token":
            if not token:
                raise ApplicationError("--token-stdin: give the new token on standard input.")
            return {"updated": _account_row(account_set_token(account=account, token=token))}
        return webhook_setup(account=account, target_url=o["url"])
