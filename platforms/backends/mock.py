"""A crowd platform in process memory: no account anywhere, no network (Mephisto's `providers/mock/` is the model).

A newcomer publishes, syncs, decides and pays from the admin of `make demo` exactly as on Prolific: the same dry
runs, the same ledger and decision rows stored before each call; only the calls land here. Its state lives in this
process, keyed by the platform study's id (a restart forgets it: the next read starts the study again from what
StyleCrowd knows, published). The mock's participants have no platform id of their own: they enter by the study's
anonymous link (annotation Participant.platform "anonymous", PEOPLE below), and a sync is told who came
(`arrivals_record`): each arrival is a submission awaiting review. Vocabulary and steps copy Prolific's."""
from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.utils import timezone

from core.errors import ApplicationError
from platforms.backends.base import Arrival, PlannedCall, StudyCost, StudyPlan, SubmissionInfo, TestRun
from platforms.clients.errors import REFUSED, PlatformCallError
from platforms.error_codes import PLATFORM_NOT_FOUND, PLATFORM_REFUSED
from platforms.models import PlatformAccount, PlatformStudy


@dataclass
class MockStudy:
    external_id: str
    internal_name: str
    status: str = "UNPUBLISHED"
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)  # submission id -> row
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class MockPlatform:
    """Everything the mock platform holds: studies, bonuses paid (by request token), participant lists."""

    studies: dict[str, MockStudy] = field(default_factory=dict)
    bonuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    lists: dict[str, set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


STATE = MockPlatform()


def mock_reset() -> None:
    """Forget everything (tests)."""
    with STATE.lock:
        STATE.studies.clear()
        STATE.bonuses.clear()
        STATE.lists.clear()


def _refused(message: str) -> PlatformCallError:
    return PlatformCallError(message, outcome=REFUSED, code=PLATFORM_REFUSED)


class MockBackend:
    platform = "mock"
    ID_NAME = "mock study id"
    PEOPLE = "anonymous"
    LINKS_STUDY = False
    LEFT = frozenset({"RETURNED", "TIMED-OUT"})
    WITHDRAWN = frozenset({"RETURNED"})
    DECIDABLE = frozenset({"AWAITING REVIEW"})
    RETURNABLE = frozenset({"ACTIVE", "AWAITING REVIEW"})
    DECIDED = {"approve": "APPROVED", "reject": "REJECTED", "screen_out": "SCREENED OUT"}
    MESSAGE_CHUNK = 500
    BONUS_MODE = "each"
    BONUS_SETUP_CHUNK = 0
    FEEDBACK_MAX = 10_000
    CREATES_ON_PUBLISH = False
    TAKES_TOKEN = False
    CREDENTIALS = "none needed (in memory)"
    WEBHOOKS = False
    ARRIVALS_FROM_LINK = True
    FEE_RATE = Decimal("0")  # no money moves
    HOURLY_FLOORS = ""

    def __init__(self, account: PlatformAccount) -> None:
        self.account = account

    def close(self) -> None:
        pass

    # --- the account --------------------------------------------------------------------------------------------

    def account_fields_check(self, *, token: str, token_env: str, api_url: str, endpoint_url: str) -> None:
        if token or token_env or api_url or endpoint_url:
            raise ApplicationError("The mock platform takes no token and no address: it lives in memory.",
                                   field="token")

    def default_account(self) -> dict[str, Any] | None:
        return {"name": "mock"}

    def currency(self) -> str:
        return str(settings.STYLECROWD_PAY_CURRENCY)

    def account_check(self) -> dict[str, Any]:
        return {"user_id": "mock-researcher"}

    def account_learned(self) -> dict[str, str]:
        return {}

    # --- the study ------------------------------------------------------------------------------------------------

    def filters_check(self, filters: list[dict[str, Any]]) -> None:
        return None  # kept on the study, shown in the plan; nobody is filtered in memory

    def language_filter(self, *, kind: str, language_name: str,
                        filters: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
        return None, f"Language: the mock platform recruits nobody by language ({language_name} asked)."

    def plan_terms(self, *, reward_cents: int, currency: str, estimated_minutes: int, time_limit_minutes: int,
                   screen_out_reward_cents: int) -> tuple[int, int]:
        if screen_out_reward_cents and screen_out_reward_cents >= reward_cents:
            raise ApplicationError("Screen-out reward: must be less than the study's reward.",
                                   field="screen_out_reward")
        return time_limit_minutes, screen_out_reward_cents

    def description_text(self, text: str) -> str:
        return text

    def draft_call(self, plan: StudyPlan) -> PlannedCall:
        return PlannedCall(platform=self.platform, what="creating the draft study", method="POST", path="/studies/",
                           body={"name": plan.title, "internal_name": f"stylecrowd:{plan.slug}:{plan.idempotency_key}",
                                 "external_study_url": plan.participant_url, "places": plan.places,
                                 "reward": plan.reward_cents, "currency": plan.currency, "filters": plan.filters,
                                 "completion_code": plan.completion_code})

    def draft_ref(self, response: Any) -> str:
        return self.created_id(response)

    def publish_call(self, platform_study: PlatformStudy, plan: StudyPlan | None = None) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"publishing study {platform_study.external_id}",
                           method="POST", path=f"/studies/{platform_study.external_id}/publish/")

    def published_status(self, response: Any) -> str:
        return str((response or {}).get("status") or "ACTIVE")

    def entry_study_id(self, external_id: str) -> str:
        return ""

    def created_id(self, response: Any) -> str:
        return str((response or {}).get("id") or "")

    def find_created(self, idempotency_key: str, platform_study: PlatformStudy) -> str | None:
        wanted = f"stylecrowd:{platform_study.study.slug}:{idempotency_key}"
        with STATE.lock:
            return next((s.external_id for s in STATE.studies.values() if s.internal_name == wanted), None)

    def _study(self, platform_study: PlatformStudy) -> MockStudy:
        """The study as the mock holds it; after a restart, started again as published (what StyleCrowd knows)."""
        with STATE.lock:
            study = STATE.studies.get(platform_study.external_id)
            if study is None:
                if not platform_study.external_id:
                    raise PlatformCallError("The mock platform has no such study.", outcome=REFUSED,
                                            code=PLATFORM_NOT_FOUND)
                study = STATE.studies[platform_study.external_id] = MockStudy(
                    external_id=platform_study.external_id, internal_name="",
                    status="ACTIVE" if platform_study.published_at else "UNPUBLISHED")
            return study

    def study_status(self, platform_study: PlatformStudy) -> str:
        return self._study(platform_study).status

    # --- the pre-flight: the mock charges no fee and has no pool of people -------------------------------------

    def study_cost(self, plan: StudyPlan) -> StudyCost:
        rewards = Decimal(plan.reward_cents * plan.places) / 100
        return StudyCost(total=rewards, currency=plan.currency, rewards=rewards, computed=True,
                         source="computed by StyleCrowd: reward × places; the mock platform charges no fee")

    def eligible_count(self, plan: StudyPlan) -> int | None:
        return None  # anyone with the study's link takes part

    def test_run(self, platform_study: PlatformStudy, *, email: str = "") -> TestRun | None:
        return None  # the mock's test run is its link: open it yourself

    def test_run_submissions(self, test_study_id: str) -> list[SubmissionInfo]:
        return []

    # --- what a call does here: the mock's "API" ----------------------------------------------------------------

    def send(self, call: PlannedCall) -> Any:
        parts = [p for p in call.path.split("/") if p]
        with STATE.lock:
            if call.operation == "bonus":
                return self._bonus(call.body)
            if parts == ["studies"]:
                return self._create(call.body)
            if parts[0] == "studies" and parts[-1] == "publish":
                return self._publish(parts[1])
            if parts[0] == "submissions":
                return self._transition(call.body)
            if parts[0] == "messages":
                return self._message(call.body)
        raise _refused(f"The mock platform does not know {call.method} {call.path}.")

    def _create(self, body: dict[str, Any]) -> dict[str, Any]:
        external_id = "MOCK-" + uuid.uuid4().hex[:12].upper()
        STATE.studies[external_id] = MockStudy(external_id=external_id, internal_name=body["internal_name"])
        return {"id": external_id, "status": "UNPUBLISHED"}

    def _publish(self, external_id: str) -> dict[str, Any]:
        study = STATE.studies.get(external_id)
        if study is None:
            raise PlatformCallError(f"The mock platform has no study {external_id}.", outcome=REFUSED,
                                    code=PLATFORM_NOT_FOUND)
        study.status = "ACTIVE"
        return {"id": external_id, "status": study.status}

    def _row(self, submission_id: str) -> dict[str, Any]:
        for study in STATE.studies.values():
            if submission_id in study.submissions:
                return study.submissions[submission_id]
        raise PlatformCallError(f"The mock platform has no submission {submission_id}.", outcome=REFUSED,
                                code=PLATFORM_NOT_FOUND)

    def _transition(self, body: dict[str, Any]) -> dict[str, Any]:
        action, ids = body["action"], list(body["submission_ids"])
        rows = [self._row(i) for i in ids]
        for row in rows:
            allowed = self.RETURNABLE if action == "return" else self.DECIDABLE
            if row["status"] not in allowed:
                raise _refused(f"Submission {row['id']} is {row['status']}: it cannot be sent {action}.")
        for row in rows:
            if action == "return":
                row["return_requested"] = timezone.now()
            else:
                row["status"] = self.DECIDED[action]
        return {"action": action, "submissions": ids}

    def _bonus(self, body: dict[str, Any]) -> dict[str, Any]:
        token = body["token"]
        if token in STATE.bonuses:  # the same request again (its row's id): paid once, the first answer again
            return {**STATE.bonuses[token], "repeated": True}
        row = self._row(body["submission_id"])
        if row["worker"] != body["worker_id"]:
            raise _refused(f"Submission {row['id']} is not {body['worker_id']}'s.")
        paid = {"id": "BONUS-" + uuid.uuid4().hex[:10].upper(), "worker_id": body["worker_id"],
                "amount": body["amount"], "status": "PAID"}
        STATE.bonuses[token] = paid
        return paid

    def _message(self, body: dict[str, Any]) -> dict[str, Any]:
        study = STATE.studies.get(body["study_id"])
        if study is None:
            raise _refused(f"The mock platform has no study {body['study_id']}.")
        study.messages.append(dict(body))
        return {"sent": len(body["ids"])}

    # --- submissions ----------------------------------------------------------------------------------------------

    def arrivals_record(self, platform_study: PlatformStudy, arrivals: list[Arrival]) -> None:
        """Each new arrival becomes a submission awaiting review, as a completed one on Prolific."""
        study = self._study(platform_study)
        with STATE.lock:
            known = {row["worker"] for row in study.submissions.values()}
            for arrival in arrivals:
                if arrival.worker_id in known:
                    continue
                submission_id = "MSUB-" + uuid.uuid4().hex[:12].upper()
                study.submissions[submission_id] = {
                    "id": submission_id, "worker": arrival.worker_id, "status": "AWAITING REVIEW",
                    "started_at": arrival.arrived_at, "completed_at": arrival.arrived_at, "return_requested": None}

    def _info(self, row: dict[str, Any]) -> SubmissionInfo:
        return SubmissionInfo(external_id=row["id"], worker_id=row["worker"], status=row["status"],
                              started_at=row["started_at"], completed_at=row["completed_at"],
                              return_requested_at=row["return_requested"],
                              raw={"id": row["id"], "participant_id": row["worker"], "status": row["status"]})

    def submissions(self, platform_study: PlatformStudy) -> Iterator[SubmissionInfo]:
        study = self._study(platform_study)
        with STATE.lock:
            rows = [dict(row) for row in study.submissions.values()]
        for row in rows:
            yield self._info(row)

    def submission(self, platform_study: PlatformStudy | None, external_id: str) -> tuple[SubmissionInfo, str]:
        with STATE.lock:
            for study in STATE.studies.values():
                if external_id in study.submissions:
                    return self._info(dict(study.submissions[external_id])), study.external_id
        raise PlatformCallError(f"The mock platform has no submission {external_id}.", outcome=REFUSED,
                                code=PLATFORM_NOT_FOUND)

    def submission_demographics(self, external_id: str) -> dict[str, Any] | None:
        return None  # the mock platform holds no demographics: persona attributes are asked

    # --- decisions ------------------------------------------------------------------------------------------------

    def approve_calls(self, platform_study: PlatformStudy, submission_ids: list[str],
                      feedback: str = "") -> list[PlannedCall]:
        if not submission_ids:
            return []
        return [PlannedCall(platform=self.platform, what=f"approving {len(submission_ids)} submissions",
                            method="POST", path="/submissions/transition/",
                            body={"action": "approve", "submission_ids": list(submission_ids)}, repeatable=True)]

    def reject_call(self, platform_study: PlatformStudy, submission_id: str, *, category: str,
                    message: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"rejecting submission {submission_id}", method="POST",
                           path="/submissions/transition/",
                           body={"action": "reject", "submission_ids": [submission_id], "category": category,
                                 "message": message}, repeatable=True)

    def return_call(self, platform_study: PlatformStudy, submission_id: str, reason: str) -> PlannedCall | None:
        return PlannedCall(platform=self.platform, what=f"asking submission {submission_id} to be returned",
                           method="POST", path="/submissions/transition/",
                           body={"action": "return", "submission_ids": [submission_id], "reason": reason})

    def screen_out_call(self, platform_study: PlatformStudy, submission_id: str) -> PlannedCall | None:
        if not platform_study.screen_out_reward_cents:
            return None
        return PlannedCall(platform=self.platform, what=f"screening out submission {submission_id}", method="POST",
                           path="/submissions/transition/",
                           body={"action": "screen_out", "submission_ids": [submission_id]}, repeatable=True)

    # --- bonuses: one call per ledger row, its id the request token (a repeat pays nothing) --------------------------

    def bonus_setup_call(self, platform_study: PlatformStudy, lines: list[tuple[str, Decimal]] | None = None, *,
                         csv_text: str | None = None) -> PlannedCall:
        raise ApplicationError("The mock platform pays each bonus with its own call (bonus_call).",
                               code=PLATFORM_REFUSED)

    def bonus_pay_call(self, bulk_id: str) -> PlannedCall:
        raise ApplicationError("The mock platform pays each bonus with its own call (bonus_call).",
                               code=PLATFORM_REFUSED)

    def bonus_call(self, *, worker_id: str, assignment_id: str, amount: Decimal, reason: str,
                   token: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"paying a bonus of {amount:.2f} to {worker_id}",
                           operation="bonus",
                           body={"worker_id": worker_id, "submission_id": assignment_id, "amount": f"{amount:.2f}",
                                 "reason": reason, "token": token})

    def bonus_check_hint(self, *, study_id: str, bulk_id: str, total: Decimal, currency: str, people: int,
                         sent_at: datetime | None, assignment_id: str, amount: Decimal, worker_id: str,
                         ref: str) -> str:
        return (f"On the mock platform (this server's memory): a bonus of {amount} {currency} to {worker_id} with "
                f"request token {ref}? (A restart forgets it: resolve as not paid to pay it again.)")

    # --- messages, lists, webhooks ----------------------------------------------------------------------------------

    def message_call(self, platform_study: PlatformStudy, worker_ids: list[str], subject: str,
                     body: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"messaging {len(worker_ids)} participants", method="POST",
                           path="/messages/", body={"ids": list(worker_ids), "subject": subject, "body": body,
                                                    "study_id": platform_study.external_id})

    def list_create(self, *, name: str, description: str, members: list[str]) -> str:
        list_id = "MLIST-" + uuid.uuid4().hex[:10].upper()
        with STATE.lock:
            STATE.lists[list_id] = set(members)
        return list_id

    def list_sync(self, list_id: str, members: set[str]) -> dict[str, int]:
        with STATE.lock:
            current = STATE.lists.setdefault(list_id, set())
            added, removed = len(members - current), len(current - members)
            STATE.lists[list_id] = set(members)
        return {"added": added, "removed": removed, "members": len(members)}

    def webhook_secret_create(self) -> str:
        raise ApplicationError("Webhooks: the mock platform has none (its studies are synced).", field="account")

    def webhook_subscribe(self, *, event_type: str, target_url: str) -> str:
        raise ApplicationError("Webhooks: the mock platform has none (its studies are synced).", field="account")
