"""The one interface both platforms implement, and the values that cross it.

A backend turns StyleCrowd's intent into the platform's calls. Every call that changes something is first built as
a `PlannedCall` — exactly what will be sent (method and path with the JSON body for Prolific, the operation and its
parameters for MTurk) — so that a dry run shows the very request `--apply` would send, and the stored decision or
ledger row keeps it."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from platforms.models import PlatformStudy


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


class PlatformBackend(Protocol):
    """What services ask of a platform (ProlificBackend, MTurkBackend). Steps a platform lacks return None (MTurk
    has no return request); `BONUS_MODE` says how bonuses are paid: "bulk" (Prolific: set up, then pay once) or
    "each" (MTurk: one SendBonus per ledger row with its id as UniqueRequestToken)."""

    platform: str
    LEFT: frozenset[str]       # statuses of someone who left without finishing: their slots are freed at once
    WITHDRAWN: frozenset[str]  # statuses of someone who withdrew: their answers are not used
    DECIDABLE: frozenset[str]  # statuses an approval or rejection may be sent for
    RETURNABLE: frozenset[str]
    DECIDED: dict[str, str]    # decision kind -> the status the platform shows once it is done
    MESSAGE_CHUNK: int
    BONUS_MODE: str
    FEEDBACK_MAX: int

    def account_check(self) -> dict[str, Any]: ...

    def create_call(self, plan: StudyPlan) -> PlannedCall: ...

    def send(self, call: PlannedCall) -> Any: ...

    def created_id(self, response: Any) -> str: ...

    def find_created(self, idempotency_key: str, platform_study: PlatformStudy) -> str | None: ...

    def study_status(self, platform_study: PlatformStudy) -> str: ...

    def submissions(self, platform_study: PlatformStudy) -> Iterator[SubmissionInfo]: ...

    def submission(self, platform_study: PlatformStudy | None, external_id: str) -> tuple[SubmissionInfo, str]: ...

    def approve_calls(self, platform_study: PlatformStudy, submission_ids: list[str],
                      feedback: str = "") -> list[PlannedCall]: ...

    def reject_call(self, platform_study: PlatformStudy, submission_id: str, *, category: str,
                    message: str) -> PlannedCall: ...

    def return_call(self, platform_study: PlatformStudy, submission_id: str, reason: str) -> PlannedCall | None: ...

    def screen_out_call(self, platform_study: PlatformStudy, submission_id: str) -> PlannedCall | None: ...

    def message_call(self, platform_study: PlatformStudy, worker_ids: list[str], subject: str,
                     body: str) -> PlannedCall: ...

    def list_create(self, *, name: str, description: str, members: list[str]) -> str: ...

    def list_sync(self, list_id: str, members: set[str]) -> dict[str, int]: ...

    def close(self) -> None: ...
