"""python manage.py platform_publish --study SLUG [--account NAME] [--base-url URL] [--publish] …

Creates the study's draft on its platform (Prolific: an UNPUBLISHED study with the participant link, the codes and
their actions, places, reward, devices, filters and the block list; MTurk: the HIT type), once. `--publish`
publishes it (Prolific: PUBLISH; MTurk: the ExternalQuestion HIT, in the sandbox unless the account is live)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from core.commands import JsonCommand, json_file_read
from platforms.services.accounts import account_get, study_get
from platforms.services.publish import platform_publish


class Command(JsonCommand):
    help = "Create the study's draft on Prolific or MTurk (once); --publish publishes it."
    cli_fields = {"screen_out_reward": "screen_out_reward"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--account", default="", help="Platform account (default: PROLIFIC_API_TOKEN's).")
        parser.add_argument("--base-url", default="", help="Where participants reach this server (default: "
                                                           "STYLECROWD_PUBLIC_URL).")
        parser.add_argument("--publish", action="store_true", help="Publish the draft (the second step).")
        parser.add_argument("--devices", default=None, help="Comma-separated: desktop,tablet,mobile.")
        parser.add_argument("--filters", default=None, help="JSON file: Prolific filters / MTurk requirements.")
        parser.add_argument("--allow-list", default=None, help="JSON file: {participants, accepted_writers_of, "
                                                               "min_accepted}.")
        parser.add_argument("--screen-out-reward", default=None, type=Decimal,
                            help="Prolific: fixed pay for a screened-out participant, in the account's currency.")
        parser.add_argument("--no-block-list", action="store_true", help="Do not keep blocked workers out.")
        parser.add_argument("--no-language-filter", action="store_true",
                            help="Recruit without a language filter (by default a non-English study asks Prolific "
                                 "for participants whose first language is the study's).")
        parser.add_argument("--language-filter", default=None, choices=["auto", "first", "fluent", "off"],
                            help="Prolific: which language filter (first language, fluent languages) or off.")
        parser.add_argument("--bonus-cap-per-participant", default=None, type=Decimal)
        parser.add_argument("--bonus-cap-per-study", default=None, type=Decimal)

    def run(self, **o: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if o["devices"] is not None:
            kwargs["devices"] = [d.strip() for d in o["devices"].split(",") if d.strip()]
        if o["filters"]:
            kwargs["filters"] = json_file_read(o["filters"], "--filters", expect_list="filters")
        if o["allow_list"]:
            kwargs["allow_list"] = json_file_read(o["allow_list"], "--allow-list")
        if o["screen_out_reward"] is not None:
            kwargs["screen_out_reward_cents"] = int(o["screen_out_reward"] * 100)
        if o["no_block_list"]:
            kwargs["use_block_list"] = False
        if o["language_filter"] is not None:
            kwargs["language_filter"] = o["language_filter"]
        if o["no_language_filter"]:
            kwargs["language_filter"] = "off"
        for name in ("bonus_cap_per_participant", "bonus_cap_per_study"):
            if o[name] is not None:
                kwargs[name] = o[name]
        account = account_get(name=o["account"]) if o["account"] else None
        return platform_publish(study=study_get(slug=o["study"]), account=account, base_url=o["base_url"],
                                publish=o["publish"], created_by="cli", **kwargs)
