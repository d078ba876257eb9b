"""MTurk behind the platform interface: an ExternalQuestion HIT in the sandbox unless the account says live,
assignments read with NextToken to the last page, decisions per assignment, SendBonus with the ledger row's id as
its UniqueRequestToken, NotifyWorkers in chunks of 100, qualification types as block and allow lists."""
from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils import timezone

from core.error_codes import URL_NOT_ALLOWED
from core.errors import ApplicationError
from platforms.backends.base import Arrival, PlannedCall, StudyCost, StudyPlan, SubmissionInfo, TestRun, origin
from platforms.clients.mturk import mturk_call, mturk_clients
from platforms.error_codes import HTTPS_REQUIRED, PLATFORM_REFUSED
from platforms.models import PlatformAccount, PlatformStudy

EXTERNAL_QUESTION = ('<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
                     '2006-07-14/ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL>'
                     '<FrameHeight>0</FrameHeight></ExternalQuestion>')
FEEDBACK_MAX = 1024        # RequesterFeedback of ApproveAssignment / RejectAssignment
NOTIFY_CHUNK = 100         # WorkerIds per NotifyWorkers call
SUBJECT_MAX, MESSAGE_MAX = 200, 4096
_CODE = re.compile(r"<QuestionIdentifier>\s*completion_code\s*</QuestionIdentifier>\s*<FreeText>([^<]*)</FreeText>")


# MTurk's commission (https://requester.mturk.com/pricing): 20 % of the reward and of bonuses, 40 % for a HIT with 10
# or more assignments, at least $0.01 an assignment.
# How long MTurk remembers a SendBonus's UniqueRequestToken (a repeat within it is refused, after it is paid again).
TOKEN_PROTECTS = timedelta(hours=24)
MTURK_FEE, MTURK_FEE_MANY, MTURK_MANY_ASSIGNMENTS = Decimal("0.20"), Decimal("0.40"), 10


def mturk_fee(reward: Decimal, assignments: int) -> Decimal:
    """MTurk's fee on one assignment of `reward` dollars in a HIT of `assignments`."""
    rate = MTURK_FEE_MANY if assignments >= MTURK_MANY_ASSIGNMENTS else MTURK_FEE
    return max(Decimal("0.01"), (reward * rate).quantize(Decimal("0.01")))


class MTurkBackend:
    platform = "mturk"
    LEFT: frozenset[str] = frozenset()     # abandoned and returned assignments are not listed by MTurk
    WITHDRAWN: frozenset[str] = frozenset()
    DECIDABLE = frozenset({"Submitted"})
    RETURNABLE: frozenset[str] = frozenset()
    DECIDED = {"approve": "Approved", "reject": "Rejected"}
    MESSAGE_CHUNK = NOTIFY_CHUNK
    BONUS_MODE = "each"
    FEEDBACK_MAX = FEEDBACK_MAX
    ID_NAME = "MTurk HIT id"
    PEOPLE = "mturk"
    LINKS_STUDY = True
    BONUS_SETUP_CHUNK = 0
    CREATES_ON_PUBLISH = True
    TAKES_TOKEN = False
    CREDENTIALS = "boto3's credential chain"
    WEBHOOKS = False
    ARRIVALS_FROM_LINK = False
    FEE_RATE = Decimal("0.20")  # MTurk's commission (40 % for a HIT of 10 or more assignments)
    HOURLY_FLOORS = ""

    def __init__(self, account: PlatformAccount, *, clients: tuple[Any, Any] | None = None) -> None:
        self.account = account
        self._clients = clients

    @property
    def clients(self) -> tuple[Any, Any]:
        if self._clients is None:
            self._clients = mturk_clients(sandbox=self.account.sandbox, endpoint_url=self.account.endpoint_url,
                                          profile=self.account.aws_profile)
        return self._clients

    def close(self) -> None:
        pass

    def _read(self, operation: str, what: str, **params: Any) -> dict[str, Any]:
        return mturk_call(self.clients[0], operation, params, what=what)

    def send(self, call: PlannedCall) -> Any:
        client = self.clients[0] if call.repeatable else self.clients[1]
        return mturk_call(client, call.operation, call.body, what=call.what)

    # --- the account ------------------------------------------------------------------------------------------

    def account_fields_check(self, *, token: str, token_env: str, api_url: str, endpoint_url: str) -> None:
        if token or token_env:
            raise ApplicationError("Token: MTurk uses boto3's own credential chain (environment, ~/.aws, instance "
                                   "role; aws_profile names a profile), never a token stored here.", field="token")
        if endpoint_url:
            host = urlsplit(endpoint_url).hostname or ""
            allowed = {origin(u) for u in [settings.MTURK_ENDPOINT_URL, *settings.PLATFORM_ALLOWED_API_URLS] if u}
            if not (host.endswith(".amazonaws.com") and endpoint_url.startswith("https://")) and \
                    origin(endpoint_url) not in allowed:
                raise ApplicationError(f"Endpoint URL: {endpoint_url} is not an MTurk endpoint "
                                       "(https://….amazonaws.com or PLATFORM_ALLOWED_API_URLS).",
                                       code=URL_NOT_ALLOWED, field="endpoint_url")

    def default_account(self) -> dict[str, Any] | None:
        return None  # an MTurk account is always made on purpose (it spends real money unless in the sandbox)

    def currency(self) -> str:
        return "USD"

    def account_check(self) -> dict[str, Any]:
        balance = self._read("GetAccountBalance", "checking the AWS credentials")
        return {"user_id": "", "balance": balance.get("AvailableBalance", "")}

    def account_learned(self) -> dict[str, str]:
        return {}

    # --- the study's terms ---------------------------------------------------------------------------------------

    def filters_check(self, filters: list[dict[str, Any]]) -> None:
        return None  # QualificationRequirements are checked by MTurk when the HIT type is created

    def language_filter(self, *, kind: str, language_name: str,
                        filters: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
        return None, (f"Language: MTurk has no language qualification, only a locale (country, qualification "
                      f"00000000000000000071); no country is guessed from {language_name}. Add a locale requirement "
                      "with --filters if you want one (docs/mturk.md).")

    def plan_terms(self, *, reward_cents: int, currency: str, estimated_minutes: int, time_limit_minutes: int,
                   screen_out_reward_cents: int) -> tuple[int, int]:
        return time_limit_minutes, 0  # no fixed screen-out payment on MTurk

    def description_text(self, text: str) -> str:
        return text

    def draft_call(self, plan: StudyPlan) -> PlannedCall:
        return self.hit_type_call(plan)

    def draft_ref(self, response: Any) -> str:
        return str((response or {}).get("HITTypeId", ""))

    def publish_call(self, platform_study: PlatformStudy, plan: StudyPlan | None = None) -> PlannedCall:
        if plan is None:
            raise ApplicationError("MTurk creates the HIT on publish: the study's plan is needed.",
                                   code=PLATFORM_REFUSED)
        return self.create_call(plan, hit_type_id=platform_study.hit_type_id)

    def published_status(self, response: Any) -> str:
        return "Assignable"

    def entry_study_id(self, external_id: str) -> str:
        return ""

    # --- the HIT: a HIT type first (the draft), the HIT itself on publish ---------------------------------------

    def hit_type_call(self, plan: StudyPlan) -> PlannedCall:
        params: dict[str, Any] = {
            "AutoApprovalDelayInSeconds": int(settings.MTURK_AUTO_APPROVAL_DELAY_SECONDS),
            "AssignmentDurationInSeconds": plan.maximum_minutes * 60,
            "Reward": f"{Decimal(plan.reward_cents) / 100:.2f}",
            "Title": plan.title[:128], "Keywords": plan.keywords[:1000], "Description": plan.description[:2000],
            "QualificationRequirements": self._requirements(plan),
        }
        return PlannedCall(platform=self.platform, what="creating the HIT type", operation="CreateHITType",
                           body=params, repeatable=True)

    def create_call(self, plan: StudyPlan, hit_type_id: str = "") -> PlannedCall:
        if not plan.participant_url.startswith("https://"):
            raise ApplicationError("MTurk shows an ExternalQuestion only from an https:// address; the participant "
                                   f"link is {plan.participant_url}.", code=HTTPS_REQUIRED, field="base_url")
        params = {
            "HITTypeId": hit_type_id, "MaxAssignments": plan.places,
            "LifetimeInSeconds": int(settings.MTURK_HIT_LIFETIME_SECONDS),
            "Question": EXTERNAL_QUESTION.format(url=escape(plan.participant_url)),
            "RequesterAnnotation": f"stylecrowd:{plan.slug}:{plan.idempotency_key}"[:255],
            "UniqueRequestToken": plan.idempotency_key[:64],
        }
        return PlannedCall(platform=self.platform, what="creating the HIT", operation="CreateHITWithHITType",
                           body=params)

    def _requirements(self, plan: StudyPlan) -> list[dict[str, Any]]:
        requirements = [dict(r) for r in plan.filters]
        if plan.block_list_id:
            requirements.append({"QualificationTypeId": plan.block_list_id, "Comparator": "DoesNotExist",
                                 "ActionsGuarded": "DiscoverPreviewAndAccept"})
        if plan.allow_list_id:
            requirements.append({"QualificationTypeId": plan.allow_list_id, "Comparator": "Exists",
                                 "ActionsGuarded": "DiscoverPreviewAndAccept"})
        return requirements

    def created_id(self, response: Any) -> str:
        return str(((response or {}).get("HIT") or {}).get("HITId") or "")

    def find_created(self, idempotency_key: str, platform_study: PlatformStudy) -> str | None:
        """After an unknown creation: the HIT whose RequesterAnnotation carries the key (a read)."""
        wanted = f"stylecrowd:{platform_study.study.slug}:{idempotency_key}"[:255]
        token = None
        while True:
            page = self._read("ListHITs", "listing HITs", MaxResults=100, **({"NextToken": token} if token else {}))
            for hit in page.get("HITs", []):
                if hit.get("RequesterAnnotation") == wanted:
                    return str(hit["HITId"])
            token = page.get("NextToken")
            if not token:
                return None

    def study_status(self, platform_study: PlatformStudy) -> str:
        hit = self._read("GetHIT", f"reading HIT {platform_study.external_id}", HITId=platform_study.external_id)
        return str((hit.get("HIT") or {}).get("HITStatus") or "")

    # --- the pre-flight: MTurk has no calculator and no count of qualified workers -----------------------------

    def study_cost(self, plan: StudyPlan) -> StudyCost:
        reward = Decimal(plan.reward_cents) / 100
        fee = mturk_fee(reward, plan.places)
        return StudyCost(total=(reward + fee) * plan.places, currency=plan.currency, rewards=reward * plan.places,
                         source=f"computed by StyleCrowd: reward × assignments + MTurk's fee of {fee} per assignment "
                                f"({MTURK_FEE_MANY * 100:.0f} % from {MTURK_MANY_ASSIGNMENTS} assignments on, else "
                                f"{MTURK_FEE * 100:.0f} %, at least $0.01; Masters qualifications cost more); MTurk "
                                "has no cost calculator", computed=True)

    def eligible_count(self, plan: StudyPlan) -> int | None:
        return None  # MTurk does not say how many workers hold a set of qualifications

    def test_run(self, platform_study: PlatformStudy, *, email: str = "") -> TestRun | None:
        return None  # MTurk's test participants are the requester sandbox's workers: publish a sandbox account's HIT

    def test_run_submissions(self, test_study_id: str) -> list[SubmissionInfo]:
        return []

    # --- assignments -----------------------------------------------------------------------------------------

    def _info(self, row: dict[str, Any]) -> SubmissionInfo:
        match = _CODE.search(row.get("Answer") or "")
        return SubmissionInfo(external_id=row["AssignmentId"], worker_id=row["WorkerId"],
                              status=row.get("AssignmentStatus", ""), started_at=row.get("AcceptTime"),
                              completed_at=row.get("SubmitTime"), study_code=match.group(1).strip() if match else "",
                              raw={k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()})

    def arrivals_record(self, platform_study: PlatformStudy, arrivals: list[Arrival]) -> None:
        return None  # MTurk lists its own assignments

    def submissions(self, platform_study: PlatformStudy) -> Iterator[SubmissionInfo]:
        token = None
        while True:
            params: dict[str, Any] = {"HITId": platform_study.external_id, "MaxResults": 100,
                                      "AssignmentStatuses": ["Submitted", "Approved", "Rejected"]}
            if token:
                params["NextToken"] = token
            page = self._read("ListAssignmentsForHIT", f"listing assignments of {platform_study.external_id}",
                              **params)
            for row in page.get("Assignments", []):
                yield self._info(row)
            token = page.get("NextToken")
            if not token or not page.get("Assignments"):
                return

    def submission(self, platform_study: PlatformStudy | None, external_id: str) -> tuple[SubmissionInfo, str]:
        page = self._read("GetAssignment", f"reading assignment {external_id}", AssignmentId=external_id)
        return self._info(page["Assignment"]), str(page["Assignment"].get("HITId", ""))

    def submission_demographics(self, external_id: str) -> dict[str, Any] | None:
        return None  # MTurk has no demographics of its workers: persona attributes are asked

    # --- decisions -------------------------------------------------------------------------------------------

    def approve_calls(self, platform_study: PlatformStudy, submission_ids: list[str], feedback: str = "",
                      ) -> list[PlannedCall]:
        return [PlannedCall(platform=self.platform, what=f"approving assignment {sid}", operation="ApproveAssignment",
                            body={"AssignmentId": sid, **({"RequesterFeedback": feedback} if feedback else {})},
                            repeatable=True)
                for sid in submission_ids]

    def reject_call(self, platform_study: PlatformStudy, submission_id: str, *, category: str,
                    message: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"rejecting assignment {submission_id}",
                           operation="RejectAssignment",
                           body={"AssignmentId": submission_id, "RequesterFeedback": message}, repeatable=True)

    def return_call(self, platform_study: PlatformStudy, submission_id: str, reason: str) -> PlannedCall | None:
        return None  # MTurk has no return request: an unfinished assignment is returned or abandoned by the worker

    def screen_out_call(self, platform_study: PlatformStudy, submission_id: str) -> PlannedCall | None:
        return None

    # --- bonuses: one SendBonus per ledger row, its id the UniqueRequestToken ------------------------------------

    def bonus_call(self, *, worker_id: str, assignment_id: str, amount: Decimal, reason: str,
                   token: str) -> PlannedCall:
        return PlannedCall(platform=self.platform, what=f"paying a bonus of ${amount:.2f} to {worker_id}",
                           operation="SendBonus",
                           body={"WorkerId": worker_id, "BonusAmount": f"{amount:.2f}", "AssignmentId": assignment_id,
                                 "Reason": reason, "UniqueRequestToken": token})

    def bonus_setup_call(self, platform_study: PlatformStudy, lines: list[tuple[str, Decimal]] | None = None, *,
                         csv_text: str | None = None) -> PlannedCall:
        raise ApplicationError("MTurk pays each bonus with its own SendBonus (bonus_call).", code=PLATFORM_REFUSED)

    def bonus_pay_call(self, bulk_id: str) -> PlannedCall:
        raise ApplicationError("MTurk pays each bonus with its own SendBonus (bonus_call).", code=PLATFORM_REFUSED)

    def bonus_check_hint(self, *, study_id: str, bulk_id: str, total: Decimal, currency: str, people: int,
                         sent_at: datetime | None, assignment_id: str, amount: Decimal, worker_id: str,
                         ref: str) -> str:
        hint = (f"On MTurk (requester site, or ListBonusPayments for assignment {assignment_id or '?'}): a bonus of "
                f"${amount} to {worker_id} whose reason ends with [ref {ref}]?")
        if sent_at is not None and timezone.now() - sent_at > TOKEN_PROTECTS:
            hint += (f" Warning: sent {sent_at:%Y-%m-%d %H:%M} UTC, more than 24 hours ago: MTurk's UniqueRequestToken "
                     "protects a bonus for 24 hours only, so a resend with the same token is no longer refused as a "
                     f"repeat and could pay twice. Check ListBonusPayments for assignment {assignment_id or '?'} "
                     f"(every page) for [ref {ref}] before resolving it as not paid.")
        return hint

    # --- messages --------------------------------------------------------------------------------------------

    def message_call(self, platform_study: PlatformStudy, worker_ids: list[str], subject: str,
                     body: str) -> PlannedCall:
        if not subject:
            raise ApplicationError("Subject: MTurk's NotifyWorkers needs a subject.", field="subject")
        if len(subject) > SUBJECT_MAX or len(body) > MESSAGE_MAX:
            raise ApplicationError(f"Message: MTurk takes a subject of at most {SUBJECT_MAX} and a text of at most "
                                   f"{MESSAGE_MAX} characters ({len(subject)} and {len(body)} given).",
                                   field="body")
        return PlannedCall(platform=self.platform, what=f"notifying {len(worker_ids)} workers",
                           operation="NotifyWorkers",
                           body={"Subject": subject, "MessageText": body, "WorkerIds": worker_ids})

    # --- block and allow lists: qualification types ---------------------------------------------------------------

    def list_create(self, *, name: str, description: str, members: list[str]) -> str:
        created = self.send(PlannedCall(
            platform=self.platform, what=f"creating qualification type {name!r}", operation="CreateQualificationType",
            body={"Name": name, "Keywords": "stylecrowd", "Description": description[:2000],
                  "QualificationTypeStatus": "Active"}))
        type_id = str(created["QualificationType"]["QualificationTypeId"])
        self.list_sync(type_id, set(members))
        return type_id

    def _members(self, type_id: str) -> set[str]:
        members, token = set(), None
        while True:
            page = self._read("ListWorkersWithQualificationType", f"reading qualification {type_id}",
                              QualificationTypeId=type_id, Status="Granted", MaxResults=100,
                              **({"NextToken": token} if token else {}))
            members |= {q["WorkerId"] for q in page.get("Qualifications", [])}
            token = page.get("NextToken")
            if not token or not page.get("Qualifications"):
                return members

    def list_sync(self, list_id: str, members: set[str]) -> dict[str, int]:
        current = self._members(list_id)
        add, remove = sorted(members - current), sorted(current - members)
        for worker in add:  # granting twice is harmless: repeatable
            self.send(PlannedCall(platform=self.platform, what=f"granting qualification to {worker}",
                                  operation="AssociateQualificationWithWorker",
                                  body={"QualificationTypeId": list_id, "WorkerId": worker, "IntegerValue": 1,
                                        "SendNotification": False}, repeatable=True))
        for worker in remove:
            self.send(PlannedCall(platform=self.platform, what=f"revoking qualification of {worker}",
                                  operation="DisassociateQualificationFromWorker",
                                  body={"QualificationTypeId": list_id, "WorkerId": worker,
                                        "Reason": "No longer on this requester's list."}, repeatable=True))
        return {"added": len(add), "removed": len(remove), "members": len(members)}

    # --- webhooks: none (MTurk studies are synced) -----------------------------------------------------------------

    def webhook_secret_create(self) -> str:
        raise ApplicationError("Webhooks: Prolific accounts only (MTurk studies are synced).", field="account")

    def webhook_subscribe(self, *, event_type: str, target_url: str) -> str:
        raise ApplicationError("Webhooks: Prolific accounts only (MTurk studies are synced).", field="account")
