"""Prolific behind the platform interface: what each step sends, built from Prolific's API description
(`../shared/data/platforms/prolific/publicapi.yaml`), and sent through `platforms.clients.prolific`."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.utils.dateparse import parse_datetime

from core.error_codes import URL_NOT_ALLOWED
from core.errors import ApplicationError
from core.outbound import url_allowed
from platforms.backends.base import (
    Arrival,
    PlannedCall,
    StudyCost,
    StudyPlan,
    SubmissionInfo,
    TestRun,
    money,
    origin,
)
from platforms.backends.prolific_preflight import prolific_eligible_count, prolific_study_cost, prolific_test_run
from platforms.backends.prolific_terms import (
    description_html,
    language_filter,
    prolific_minimum_time,
    reward_floor_check,
    study_filters,
)
from platforms.clients.prolific import BONUS_SETUP_CHUNK, BULK_APPROVE_CHUNK, ProlificClient
from platforms.crypto import secret_decrypt
from platforms.error_codes import (
    PLATFORM_REFUSED,
    TOKEN_MISSING,
    WORKSPACE_MISSING,
)
from platforms.models import PlatformAccount, PlatformStudy

URL_PARAMETERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
RETURN_REASON = "You did not complete the study (no answers were recorded for you)."
SCREEN_OUT_RETURN_REASON = "You did not match the study's eligibility questions, so you cannot take part."


def account_token(account: PlatformAccount) -> str:
    """The token, from its environment variable or decrypted; never logged or returned by any door."""
    if account.token_env:
        token = os.environ.get(account.token_env, "")
        if not token:
            raise ApplicationError(f"Account {account.name}: the environment variable {account.token_env} that "
                                   "should hold its Prolific token is not set.", code=TOKEN_MISSING, field="token")
        return token
    if account.token_encrypted:
        return secret_decrypt(account.token_encrypted)
    raise ApplicationError(f"Account {account.name}: no Prolific token (set token_env or store a token).",
                           code=TOKEN_MISSING, field="token")


ENV_ACCOUNT = "prolific-env"  # the account PROLIFIC_API_TOKEN stands for


def _when(value: Any) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) and value else None


class ProlificBackend:
    platform = "prolific"
    LEFT = frozenset({"RETURNED", "TIMED-OUT"})
    WITHDRAWN = frozenset({"RETURNED"})
    DECIDABLE = frozenset({"AWAITING REVIEW"})
    RETURNABLE = frozenset({"ACTIVE", "AWAITING REVIEW"})
    DECIDED = {"approve": "APPROVED", "reject": "REJECTED", "screen_out": "SCREENED OUT"}
    MESSAGE_CHUNK = 500
    BONUS_MODE = "bulk"
    FEEDBACK_MAX = 10_000
    ID_NAME = "Prolific study id"
    PEOPLE = "prolific"
    LINKS_STUDY = True
    CREATES_ON_PUBLISH = False
    TAKES_TOKEN = True
    CREDENTIALS = "none"
    WEBHOOKS = True
    ARRIVALS_FROM_LINK = False
    FEE_RATE = Decimal("0.3333")  # the service fee of academic studies, before VAT (its cost calculator is exact)
    HOURLY_FLOORS = "PROLIFIC_MIN_HOURLY_REWARD"

    def __init__(self, account: PlatformAccount, *, client: ProlificClient | None = None) -> None:
        self.account = account
        self._client = client
        self._workspace_learned = False

    @property
    def client(self) -> ProlificClient:
        if self._client is None:
            self._client = ProlificClient(token=account_token(self.account),
                                          base_url=self.account.api_url or settings.PROLIFIC_API_URL)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # --- account ---------------------------------------------------------------------------------------------

    def account_fields_check(self, *, token: str, token_env: str, api_url: str, endpoint_url: str) -> None:
        """A token goes only to Prolific's API (or an address the server's settings allow: PLATFORM_ALLOWED_API_URLS),
        so an admin form cannot send it elsewhere."""
        if api_url:
            allowed = {origin(u) for u in [settings.PROLIFIC_API_URL, *settings.PLATFORM_ALLOWED_API_URLS] if u}
            if not url_allowed(api_url, allowed):
                raise ApplicationError(f"API URL: {api_url} is not Prolific's API; the token is only ever sent to "
                                       f"{', '.join(sorted(allowed))} (PLATFORM_ALLOWED_API_URLS adds another).",
                                       code=URL_NOT_ALLOWED, field="api_url")

    def default_account(self) -> dict[str, Any] | None:
        """PROLIFIC_API_TOKEN stands for an account without set-up."""
        if not settings.PROLIFIC_API_TOKEN:
            return None
        return {"name": ENV_ACCOUNT, "token_env": "PROLIFIC_API_TOKEN", "workspace_id": settings.PROLIFIC_WORKSPACE_ID,
                "project_id": settings.PROLIFIC_PROJECT_ID}

    def currency(self) -> str:
        return str(settings.STYLECROWD_PAY_CURRENCY)

    def account_check(self) -> dict[str, Any]:
        me = self.client.me() or {}
        return {"user_id": me.get("id", ""), "email": me.get("email", "")}

    def account_learned(self) -> dict[str, str]:
        """The workspace read from the token when none was set: the service stores it."""
        return {"workspace_id": self.account.workspace_id} if self._workspace_learned else {}

    # --- the study -------------------------------------------------------------------------------------------

    def filters_check(self, filters: list[dict[str, Any]]) -> None:
        for n, flt in enumerate(filters, start=1):
            ok = isinstance(flt.get("filter_id"), str) and (
                isinstance(flt.get("selected_values"), list) or isinstance(flt.get("selected_range"), dict))
            if not ok:
                raise ApplicationError(f"Filters: filter {n} needs a filter_id and selected_values (a list) or "
                                       "selected_range (an object with lower and/or upper).", field="filters")

    def language_filter(self, *, kind: str, language_name: str,
                        filters: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
        available = self.client.filters_list(self.account.workspace_id)  # a read: ids are Prolific's, not fixed
        return language_filter(available, kind=kind, language_name=language_name, own=filters)

    def plan_terms(self, *, reward_cents: int, currency: str, estimated_minutes: int, time_limit_minutes: int,
                   screen_out_reward_cents: int) -> tuple[int, int]:
        """(maximum minutes, screen-out reward): Prolific's reward floor and its floor for the maximum time."""
        reward_floor_check(reward_cents=reward_cents, minutes=estimated_minutes, currency=currency)
        if screen_out_reward_cents and screen_out_reward_cents >= reward_cents:
            raise ApplicationError("Screen-out reward: must be less than the study's reward "
                                   f"({money(Decimal(reward_cents) / 100, currency)}).", field="screen_out_reward")
        return max(time_limit_minutes, prolific_minimum_time(estimated_minutes)), screen_out_reward_cents

    def description_text(self, text: str) -> str:
        return description_html(text)

    def draft_call(self, plan: StudyPlan) -> PlannedCall:
        return self.create_call(plan)

    def draft_ref(self, response: Any) -> str:
        return self.created_id(response)

    def published_status(self, response: Any) -> str:
        return str((response or {}).get("status") or "ACTIVE")

    def entry_study_id(self, external_id: str) -> str:
        return external_id  # participants' links carry it (STUDY_ID), and the entry check compares

    def create_call(self, plan: StudyPlan) -> PlannedCall:
        if plan.screen_out_reward_cents:
            screened = {"code": plan.screened_out_code, "code_type": "FIXED_SCREENOUT", "actor": "participant",
                        "actions": [{"action": "FIXED_SCREEN_OUT_PAYMENT",
                                     "fixed_screen_out_reward": plan.screen_out_reward_cents, "slots": plan.places}]}
        else:
            screened = {"code": plan.screened_out_code, "code_type": "OTHER", "actor": "participant",
                        "actions": [{"action": "REQUEST_RETURN", "return_reason": SCREEN_OUT_RETURN_REASON}]}
        filters = study_filters(plan.filters, block_list_id=plan.block_list_id, allow_list_id=plan.allow_list_id)
        body: dict[str, Any] = {
            "name": plan.title,
            "internal_name": f"stylecrowd:{plan.slug}:{plan.idempotency_key}",
            "description": plan.description,
            "external_study_url": f"{plan.participant_url}?{URL_PARAMETERS}",
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                # Decisions come from StyleCrowd's checks, sent through the API: every finished submission waits.
                {"code": plan.completion_code, "code_type": "COMPLETED", "actor": "participant",
                 "actions": [{"action": "MANUALLY_REVIEW"}]},
                screened,
                # For the researcher on Prolific's own pages: asks the participant to return, with the reason.
                {"code": plan.return_code, "code_type": "OTHER", "actor": "researcher",
                 "actions": [{"action": "REQUEST_RETURN", "return_reason": RETURN_REASON}]},
            ],
            "total_available_places": plan.places,
            "estimated_completion_time": plan.estimated_minutes,
            "maximum_allowed_time": plan.maximum_minutes,
            "reward": plan.reward_cents,
            "device_compatibility": list(plan.devices),
            "filters": filters,
            "study_labels": list(plan.labels),
            "metadata": json.dumps({"stylecrowd_study": plan.slug, "key": plan.idempotency_key}),
        }
        if plan.project_id:
            body["project"] = plan.project_id
        if plan.max_submissions_per_participant > 1:
            body["submissions_config"] = {"max_submissions_per_participant": plan.max_submissions_per_participant}
        return PlannedCall(platform=self.platform, what="creating the draft study", method="POST",
                           path="/api/v1/studies/", body=body)

    def publish_call(self, platform_study: PlatformStudy, plan: StudyPlan | None = None) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"publishing study {platform_study.external_id}",
                           method="POST", path=f"/api/v1/studies/{platform_study.external_id}/transition/",
                           body={"action": "PUBLISH"})

    def created_id(self, response: Any) -> str:
        return str((response or {}).get("id") or "")

    def find_created(self, idempotency_key: str, platform_study: PlatformStudy) -> str | None:
        """After an unknown creation: the study whose internal name carries the key, if Prolific made it (a read,
        never a second creation)."""
        wanted = f"stylecrowd:{platform_study.study.slug}:{idempotency_key}"
        for row in self.client.studies_list(self.account.project_id):
            if row.get("internal_name") == wanted:
                return str(row["id"])
        return None

    def study_status(self, platform_study: PlatformStudy) -> str:
        return str((self.client.study_get(platform_study.external_id) or {}).get("status") or "")

    # --- the pre-flight (platforms/backends/prolific_preflight.py) ------------------------------------------------

    def study_cost(self, plan: StudyPlan) -> StudyCost:
        return prolific_study_cost(self.client, plan)

    def eligible_count(self, plan: StudyPlan) -> int | None:
        filters = study_filters(plan.filters, block_list_id=plan.block_list_id, allow_list_id=plan.allow_list_id)
        return prolific_eligible_count(self.client, filters, self.account.workspace_id)

    def test_run(self, platform_study: PlatformStudy, *, email: str = "") -> TestRun | None:
        return prolific_test_run(self.client, platform_study.external_id, email=email)

    def test_run_submissions(self, test_study_id: str) -> list[SubmissionInfo]:
        return [self._info(row) for row in self.client.submissions_list(test_study_id)]

    def send(self, call: PlannedCall) -> Any:
        return self.client.request(call.method, call.path, json=call.body or None, repeatable=call.repeatable,
                                   what=call.what)

    # --- submissions -----------------------------------------------------------------------------------------

    def arrivals_record(self, platform_study: PlatformStudy, arrivals: list[Arrival]) -> None:
        return None  # Prolific knows its participants itself

    def _info(self, row: dict[str, Any]) -> SubmissionInfo:
        return SubmissionInfo(
            external_id=str(row.get("id") or ""), worker_id=str(row.get("participant_id") or row.get("participant")
                                                                or ""),
            status=str(row.get("status") or ""), started_at=_when(row.get("started_at")),
            completed_at=_when(row.get("completed_at")),
            study_code=str(row.get("study_code") or row.get("entered_code") or ""),
            return_requested_at=_when(row.get("return_requested")), raw=row)

    def submissions(self, platform_study: PlatformStudy) -> Iterator[SubmissionInfo]:
        for row in self.client.submissions_list(platform_study.external_id):
            yield self._info(row)

    def submission(self, platform_study: PlatformStudy | None, external_id: str) -> tuple[SubmissionInfo, str]:
        """One submission and the id of its study."""
        row = self.client.submission_get(external_id)
        return self._info(row), str(row.get("study_id") or "")

    def submission_demographics(self, external_id: str) -> dict[str, Any] | None:
        return self.client.submission_demographics(external_id) or {}

    # --- decisions -------------------------------------------------------------------------------------------

    def approve_calls(self, platform_study: PlatformStudy, submission_ids: list[str], feedback: str = "",
                      ) -> list[PlannedCall]:
        return [PlannedCall(platform=self.platform, what=f"approving {len(chunk)} submissions", method="POST",
                            path="/api/v1/submissions/bulk-approve/", body={"submission_ids": chunk},
                            repeatable=True)
                for chunk in _chunks(submission_ids, BULK_APPROVE_CHUNK)]

    def reject_call(self, platform_study: PlatformStudy, submission_id: str, *, category: str,
                    message: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"rejecting submission {submission_id}", method="POST",
                           path=f"/api/v1/submissions/{submission_id}/transition/",
                           body={"action": "REJECT", "rejection_category": category, "message": message},
                           repeatable=True)

    def return_call(self, platform_study: PlatformStudy, submission_id: str, reason: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"asking submission {submission_id} to be returned",
                           method="POST", path=f"/api/v1/submissions/{submission_id}/request-return/",
                           body={"request_return_reasons": [reason]})

    def screen_out_call(self, platform_study: PlatformStudy, submission_id: str) -> PlannedCall | None:
        if not platform_study.screen_out_reward_cents:
            return None  # no fixed screen-out payment on this study: ask for a return instead
        return PlannedCall(platform=self.platform, what=f"screening out submission {submission_id}", method="POST",
                           path=f"/api/v1/submissions/{submission_id}/transition/",
                           body={"action": "SCREEN_OUT", "completion_code": platform_study.study.screened_out_code},
                           repeatable=True)

    # --- bonuses: set up (its id stored), then paid once ------------------------------------------------------

    def bonus_setup_call(self, platform_study: PlatformStudy, lines: list[tuple[str, Decimal]] | None = None, *,
                         csv_text: str | None = None) -> PlannedCall:
        """`<participant_id>,<amount>` per line, the amount in the study's currency (1.50 is £1.50)."""
        lines = lines or []
        csv = csv_text if csv_text is not None else "".join(f"{worker},{amount:.2f}\n" for worker, amount in lines)
        return PlannedCall(platform=self.platform, what="setting up the bonus payments", method="POST",
                           path="/api/v1/submissions/bonus-payments/",
                           body={"study_id": platform_study.external_id, "csv_bonuses": csv})

    def bonus_pay_call(self, bulk_id: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"paying bulk bonus {bulk_id}", method="POST",
                           path=f"/api/v1/bulk-bonus-payments/{bulk_id}/pay/")

    BONUS_SETUP_CHUNK = BONUS_SETUP_CHUNK

    def bonus_call(self, *, worker_id: str, assignment_id: str, amount: Decimal, reason: str,
                   token: str) -> PlannedCall:
        raise ApplicationError("Prolific pays bonuses in bulk (bonus_setup_call, then bonus_pay_call).",
                               code=PLATFORM_REFUSED)

    def bonus_check_hint(self, *, study_id: str, bulk_id: str, total: Decimal, currency: str, people: int,
                         sent_at: datetime | None, assignment_id: str, amount: Decimal, worker_id: str,
                         ref: str) -> str:
        ident = f"bulk bonus {bulk_id}" if bulk_id else "a bulk bonus set up"
        return (f"On Prolific, study {study_id} › Bonus payments: is {ident} ({total} {currency}, {people} "
                f"participant(s)) paid{f' (sent {sent_at:%Y-%m-%d %H:%M} UTC)' if sent_at else ''}?")

    # --- messages --------------------------------------------------------------------------------------------

    def message_call(self, platform_study: PlatformStudy, worker_ids: list[str], subject: str,
                     body: str) -> PlannedCall:
        text = f"{subject}\n\n{body}" if subject else body
        return PlannedCall(platform=self.platform, what=f"messaging {len(worker_ids)} participants", method="POST",
                           path="/api/v1/messages/bulk/",
                           body={"ids": worker_ids, "body": text, "study_id": platform_study.external_id})

    # --- block and allow lists: participant groups used as filters ---------------------------------------------

    def workspace_id(self) -> str:
        """The account's workspace; with none set, the token's only workspace (read once; the service stores it)."""
        if self.account.workspace_id:
            return self.account.workspace_id
        spaces = self.client.workspaces()
        if len(spaces) != 1:
            raise ApplicationError(
                f"Account {self.account.name}: the token's user has {len(spaces)} workspaces; say which one to use "
                f"(workspace id: {', '.join(str(w.get('id')) for w in spaces[:5]) or 'none'}).",
                code=WORKSPACE_MISSING, field="workspace_id")
        self.account.workspace_id = str(spaces[0]["id"])
        self._workspace_learned = True  # stored by the service that asked (account_learned)
        return self.account.workspace_id

    def list_create(self, *, name: str, description: str, members: list[str]) -> str:
        group = self.client.group_create(workspace_id=self.workspace_id(), name=name, description=description,
                                         participant_ids=members)
        return str(group.get("id") or "")

    def list_sync(self, list_id: str, members: set[str]) -> dict[str, int]:
        current = set(self.client.group_members(list_id))
        add, remove = sorted(members - current), sorted(current - members)
        for chunk in _chunks(add, 1000):
            self.client.group_add(list_id, chunk)
        for chunk in _chunks(remove, 1000):
            self.client.group_remove(list_id, chunk)
        return {"added": len(add), "removed": len(remove), "members": len(members)}

    # --- webhooks --------------------------------------------------------------------------------------------

    def webhook_secret_create(self) -> str:
        secret = self.client.hook_secret_create(self.account.workspace_id) or {}
        if not secret.get("value"):
            raise ApplicationError("Prolific did not return a webhook secret.", code=PLATFORM_REFUSED, status=502)
        return str(secret["value"])

    def webhook_subscribe(self, *, event_type: str, target_url: str) -> str:
        """Subscribe, and confirm the subscription when Prolific asks; its id."""
        subscription, hook_secret = self.client.hook_subscribe(
            workspace_id=self.account.workspace_id, event_type=event_type, target_url=target_url)
        subscription_id = str(subscription.get("id") or "")
        if not subscription_id and subscription.get("results"):
            subscription_id = str(subscription["results"][0].get("id") or "")
        if hook_secret:
            self.client.hook_confirm(subscription_id, hook_secret)
        return subscription_id


def _chunks(values: list[Any], size: int) -> list[list[Any]]:
    return [values[i:i + size] for i in range(0, len(values), size)]
