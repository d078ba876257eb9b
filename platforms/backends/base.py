"""The one interface every platform implements, and the values that cross it.

A backend turns StyleCrowd's intent into the platform's calls. Every call that changes something is first built as
a `PlannedCall` — exactly what will be sent (method and path with the JSON body for Prolific, the operation and its
parameters for MTurk) — so that a dry run shows the very request `--apply` would send, and the stored decision or
ledger row keeps it."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from core.outbound import origin  # noqa: F401 - the one definition, re-exported for the backends
from platforms.models import PlatformStudy

CURRENCY_SIGNS = {"GBP": "£", "USD": "$", "EUR": "€"}


def money(amount: Decimal | float, currency: str) -> str:
    return f"{CURRENCY_SIGNS.get(currency, currency + ' ')}{Decimal(str(amount)):.2f}"


@dataclass(frozen=True)
class PlannedCall:
    """One request to the platform. `repeatable`: safe to send again (the client may retry it)."""

    platform: str
    what: str
    method: str = ""          # Prolific: HTTP method
    path: str = ""            # Prolific: path under the API
    operation: str = ""       # MTurk: API operation, e.g. SendBonus
    body: dict[str, Any] = field(default_factory=dict)  # JSON body (Prolific) or parameters (MTurk)
    repeatable: bool = False

    def describe(self) -> dict[str, Any]:
        if self.operation:
            return {"operation": self.operation, "params": self.body}
        return {"method": self.method, "path": self.path, "body": self.body}


@dataclass
class StudyPlan:
    """What a platform study is created with, from the StyleCrowd study (see services/publish.py)."""

    title: str
    description: str
    participant_url: str
    places: int
    reward_cents: int
    currency: str
    estimated_minutes: int
    maximum_minutes: int
    completion_code: str
    screened_out_code: str
    screen_out_reward_cents: int
    return_code: str
    max_submissions_per_participant: int
    devices: list[str]
    filters: list[Any]
    block_list_id: str
    allow_list_id: str
    labels: list[str]
    idempotency_key: str
    slug: str
    project_id: str = ""
    keywords: str = ""
    notes: list[str] = field(default_factory=list)  # what the plan says in words (language filter, warnings)
    recruitment_language: dict[str, Any] = field(default_factory=dict)  # stored on the platform study (the card)


@dataclass
class SubmissionInfo:
    """A submission (Prolific) or assignment (MTurk) as the platform reports it."""

    external_id: str
    worker_id: str
    status: str
    started_at: datetime | None = None
    completed_at: datetime | None = None
    study_code: str = ""
    return_requested_at: datetime | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StudyCost:
    """What publishing a study would cost (the pre-flight, platforms/services/preflight.py): `total` in `currency`
    with the platform's fees (and VAT) included, `rewards` the places × reward within it. `computed`: StyleCrowd
    computed it from the platform's published fees (no calculator on the platform); `source` says how, for people."""

    total: Decimal
    currency: str
    rewards: Decimal
    source: str
    computed: bool


@dataclass(frozen=True)
class TestRun:
    """A run through the platform's real link by a test participant (Prolific's test study of a draft): where the
    test participant starts, and how to check it afterwards."""

    test_study_id: str
    study_url: str
    participant_id: str = ""


@dataclass(frozen=True)
class Arrival:
    """Someone who came to the study through the platform's link, as StyleCrowd recorded them: what a platform that
    cannot see its own participants (the mock) is told before a sync (`arrivals_record`)."""

    worker_id: str
    arrived_at: datetime | None = None


@runtime_checkable
class PlatformBackend(Protocol):
    """What services ask of a platform (ProlificBackend, MTurkBackend, MockBackend): every difference between the
    platforms is an attribute or a method here, never an `if platform == …` in a service. Steps a platform lacks
    return None (MTurk has no return request). A backend never touches the database: what it learns for the
    account (`account_learned`) a service stores."""

    platform: str
    ID_NAME: str               # what the platform calls its study's id, for people ("Prolific study id")
    PEOPLE: str                # annotation Participant.platform of the people who come through this platform
    LINKS_STUDY: bool          # publishing makes the study take this platform's links only (study_platform_link)
    LEFT: frozenset[str]       # statuses of someone who left without finishing: their slots are freed at once
    WITHDRAWN: frozenset[str]  # statuses of someone who withdrew: their answers are not used
    DECIDABLE: frozenset[str]  # statuses an approval or rejection may be sent for
    RETURNABLE: frozenset[str]
    DECIDED: dict[str, str]    # decision kind -> the status the platform shows once it is done
    MESSAGE_CHUNK: int
    BONUS_MODE: str            # "bulk" (set up, then pay once: Prolific) or "each" (one call per ledger row)
    BONUS_SETUP_CHUNK: int     # participants per bulk set-up ("bulk" only)
    FEEDBACK_MAX: int
    CREATES_ON_PUBLISH: bool   # the draft is a template (MTurk's HIT type); the study itself is created on publish
    TAKES_TOKEN: bool          # the account holds an API token (else: the platform's own credentials, or none)
    CREDENTIALS: str           # where the credentials come from when no token is stored, for the admin
    WEBHOOKS: bool             # the platform can push submission changes (else they are synced)
    ARRIVALS_FROM_LINK: bool   # the platform learns who came from StyleCrowd (`arrivals_record`) before a sync
    FEE_RATE: Decimal          # the platform's service fee on rewards and bonuses, a fraction (the overview's estimate)
    HOURLY_FLOORS: str         # the setting of the platform's minimum hourly pay per currency ("" where it has none)

    # --- the account --------------------------------------------------------------------------------------------

    def account_fields_check(self, *, token: str, token_env: str, api_url: str, endpoint_url: str) -> None: ...

    def default_account(self) -> dict[str, Any] | None: ...

    def currency(self) -> str: ...

    def account_check(self) -> dict[str, Any]: ...

    def account_learned(self) -> dict[str, str]: ...

    # --- the study ------------------------------------------------------------------------------------------------

    def filters_check(self, filters: list[dict[str, Any]]) -> None: ...

    def language_filter(self, *, kind: str, language_name: str,
                        filters: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
        """(a filter recruiting speakers of the language, or None; a note for the plan). kind: first / fluent."""
        ...

    def plan_terms(self, *, reward_cents: int, currency: str, estimated_minutes: int, time_limit_minutes: int,
                   screen_out_reward_cents: int) -> tuple[int, int]: ...

    def description_text(self, text: str) -> str: ...

    def draft_call(self, plan: StudyPlan) -> PlannedCall: ...

    def draft_ref(self, response: Any) -> str: ...

    def publish_call(self, platform_study: PlatformStudy, plan: StudyPlan | None = None) -> PlannedCall: ...

    def published_status(self, response: Any) -> str: ...

    def entry_study_id(self, external_id: str) -> str: ...

    def send(self, call: PlannedCall) -> Any: ...

    def created_id(self, response: Any) -> str: ...

    def find_created(self, idempotency_key: str, platform_study: PlatformStudy) -> str | None: ...

    def study_status(self, platform_study: PlatformStudy) -> str: ...

    # --- the pre-flight, before publishing ------------------------------------------------------------------------

    def study_cost(self, plan: StudyPlan) -> StudyCost:
        """The platform's own calculator where it has one (Prolific), else computed from its published fees."""
        ...

    def eligible_count(self, plan: StudyPlan) -> int | None:
        """How many people the platform has for the plan's filters; None where it cannot say (MTurk, the mock)."""
        ...

    def test_run(self, platform_study: PlatformStudy, *, email: str = "") -> TestRun | None:
        """A test participant's run of the draft through the real link (with `email`, a test participant is made
        first); None where the platform has none (MTurk: its sandbox; the mock: its link)."""
        ...

    def test_run_submissions(self, test_study_id: str) -> list[SubmissionInfo]: ...

    # --- submissions ----------------------------------------------------------------------------------------------

    def arrivals_record(self, platform_study: PlatformStudy, arrivals: list[Arrival]) -> None: ...

    def submissions(self, platform_study: PlatformStudy) -> Iterator[SubmissionInfo]: ...

    def submission(self, platform_study: PlatformStudy | None, external_id: str) -> tuple[SubmissionInfo, str]: ...

    def submission_demographics(self, external_id: str) -> dict[str, Any] | None:
        """The demographics the platform archived for a submission ({} when it holds none for it), or None where the
        platform gives none (MTurk, the mock): persona attributes are then asked."""
        ...

    # --- decisions ------------------------------------------------------------------------------------------------

    def approve_calls(self, platform_study: PlatformStudy, submission_ids: list[str],
                      feedback: str = "") -> list[PlannedCall]: ...

    def reject_call(self, platform_study: PlatformStudy, submission_id: str, *, category: str,
                    message: str) -> PlannedCall: ...

    def return_call(self, platform_study: PlatformStudy, submission_id: str, reason: str) -> PlannedCall | None: ...

    def screen_out_call(self, platform_study: PlatformStudy, submission_id: str) -> PlannedCall | None: ...

    # --- bonuses --------------------------------------------------------------------------------------------------

    def bonus_setup_call(self, platform_study: PlatformStudy, lines: list[tuple[str, Decimal]] | None = None, *,
                         csv_text: str | None = None) -> PlannedCall: ...

    def bonus_pay_call(self, bulk_id: str) -> PlannedCall: ...

    def bonus_call(self, *, worker_id: str, assignment_id: str, amount: Decimal, reason: str,
                   token: str) -> PlannedCall: ...

    def bonus_check_hint(self, *, study_id: str, bulk_id: str, total: Decimal, currency: str, people: int,
                         sent_at: datetime | None, assignment_id: str, amount: Decimal, worker_id: str,
                         ref: str) -> str: ...

    # --- messages, lists, webhooks ----------------------------------------------------------------------------------

    def message_call(self, platform_study: PlatformStudy, worker_ids: list[str], subject: str,
                     body: str) -> PlannedCall: ...

    def list_create(self, *, name: str, description: str, members: list[str]) -> str: ...

    def list_sync(self, list_id: str, members: set[str]) -> dict[str, int]: ...

    def webhook_secret_create(self) -> str: ...

    def webhook_subscribe(self, *, event_type: str, target_url: str) -> str: ...

    def close(self) -> None: ...
