"""MTurk through botocore's Stubber: every call is checked against AWS's own service model (parameter names, types,
limits) and against the exact parameters expected here."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from annotation.models import Participant
from platforms.models import BonusPayment, CallState, Decision, PlatformAccount, PlatformStudy
from platforms.services.bonuses import platform_bonus
from platforms.services.decisions import platform_decide
from platforms.services.lists import block_list_sync
from platforms.services.messages import platform_message
from platforms.services.publish import platform_publish
from platforms.services.sync import platform_sync
from tests import factories as f
from tests.platforms.conftest import failed_checks

pytestmark = pytest.mark.django_db
NOW = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


@pytest.fixture
def stub(platform_settings: Any, monkeypatch: Any) -> Any:
    client = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE",
                          aws_secret_access_key="secret", endpoint_url="https://mturk-requester-sandbox.us-east-1."
                                                                      "amazonaws.com")
    stubber = Stubber(client)
    monkeypatch.setattr("platforms.backends.mturk.mturk_clients", lambda **kw: (client, client))
    with stubber:
        yield stubber
    stubber.assert_no_pending_responses()


@pytest.fixture
def turk(db: Any) -> PlatformAccount:
    return PlatformAccount.objects.create(name="turk", platform="mturk", sandbox=True)


def mturk_study() -> Any:
    study = f.StudyFactory(status="active", platform="mturk", allow_anonymous=False, target_hourly_pay=12,
                           estimated_minutes=10, items_per_batch=2, annotators_per_item=3, title="Style pairs")
    f.annotated_study(answers=[["S2-S1"] * 3, ["S2-S1", "S1-S2", "S2-S1"]], study=study)
    for n, p in enumerate(Participant.objects.filter(study=study).order_by("external_id")):
        Participant.objects.filter(pk=p.pk).update(platform="mturk", external_id=f"A{n + 1:013d}")
    return study


def published(stub: Any, turk: PlatformAccount, study: Any) -> PlatformStudy:
    stub.add_response("create_hit_type", {"HITTypeId": "T" * 30}, {
        "AutoApprovalDelayInSeconds": 259200, "AssignmentDurationInSeconds": 30 * 60, "Reward": "2.00",
        "Title": "Style pairs", "Keywords": ANY, "Description": ANY, "QualificationRequirements": []})
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H" * 30, "HITTypeId": "T" * 30}}, {
        "HITTypeId": "T" * 30, "MaxAssignments": 3, "LifetimeInSeconds": 604800, "Question": ANY,
        "RequesterAnnotation": ANY, "UniqueRequestToken": ANY})
    platform_publish(study=study, account=turk, use_block_list=False)
    summary = platform_publish(study=study, account=turk, publish=True)
    assert summary["state"] == "published" and summary["external_id"] == "H" * 30
    return PlatformStudy.objects.get(study=study)


def assignment(worker: str, n: int, status: str = "Submitted") -> dict[str, Any]:
    answer = ('<QuestionFormAnswers><Answer><QuestionIdentifier>completion_code</QuestionIdentifier>'
              '<FreeText>CODE</FreeText></Answer></QuestionFormAnswers>')
    return {"AssignmentId": f"{n:030d}", "WorkerId": worker, "HITId": "H" * 30, "AssignmentStatus": status,
            "AcceptTime": NOW, "SubmitTime": NOW, "Answer": answer}


def synced(stub: Any, ps: PlatformStudy) -> list[str]:
    workers = list(Participant.objects.filter(study=ps.study).order_by("external_id")
                   .values_list("external_id", flat=True))
    pages = [[assignment(workers[0], 1), assignment(workers[1], 2, "Approved")],
             [assignment(workers[2], 3, "Rejected")]]
    statuses = ["Submitted", "Approved", "Rejected"]
    stub.add_response("get_hit", {"HIT": {"HITId": "H" * 30, "HITStatus": "Assignable"}}, {"HITId": "H" * 30})
    stub.add_response("list_assignments_for_hit", {"Assignments": pages[0], "NextToken": "page2", "NumResults": 2},
                      {"HITId": "H" * 30, "MaxResults": 100, "AssignmentStatuses": statuses})
    stub.add_response("list_assignments_for_hit", {"Assignments": pages[1], "NumResults": 1},
                      {"HITId": "H" * 30, "MaxResults": 100, "AssignmentStatuses": statuses, "NextToken": "page2"})
    summary = platform_sync(platform_study=ps)
    assert summary["submissions"] == 3 and summary["unknown_participants"] == []
    return workers


def test_publish_is_an_external_question_hit_in_the_sandbox(stub, turk) -> None:
    study = mturk_study()
    ps = published(stub, turk, study)
    sent = ps.create_request["params"]
    assert sent["Reward"] == "2.00" and ps.external_id == "H" * 30
    study.refresh_from_db()
    assert study.platform == "mturk" and not study.allow_anonymous


def test_the_hit_keeps_blocked_workers_out(stub, turk) -> None:
    study = mturk_study()
    f.ParticipantFactory(study=study, platform="mturk", external_id="ABLOCKED00001")
    from annotation.models import WorkerBlock

    WorkerBlock.objects.create(platform="mturk", external_id="ABLOCKED00001")
    stub.add_response("create_qualification_type", {"QualificationType": {"QualificationTypeId": "Q" * 30}},
                      {"Name": "StyleCrowd block list", "Keywords": "stylecrowd", "Description": ANY,
                       "QualificationTypeStatus": "Active"})
    stub.add_response("list_workers_with_qualification_type", {"Qualifications": []},
                      {"QualificationTypeId": "Q" * 30, "Status": "Granted", "MaxResults": 100})
    stub.add_response("associate_qualification_with_worker", {},
                      {"QualificationTypeId": "Q" * 30, "WorkerId": "ABLOCKED00001", "IntegerValue": 1,
                       "SendNotification": False})
    stub.add_response("create_hit_type", {"HITTypeId": "T" * 30}, {
        "AutoApprovalDelayInSeconds": ANY, "AssignmentDurationInSeconds": ANY, "Reward": "2.00", "Title": ANY,
        "Keywords": ANY, "Description": ANY, "QualificationRequirements": [
            {"QualificationTypeId": "Q" * 30, "Comparator": "DoesNotExist",
             "ActionsGuarded": "DiscoverPreviewAndAccept"}]})
    platform_publish(study=study, account=turk)
    turk.refresh_from_db()
    assert turk.block_list_id == "Q" * 30


def test_sync_reads_every_page_with_next_token(stub, turk) -> None:
    ps = published(stub, turk, mturk_study())
    synced(stub, ps)
    assert ps.submissions.filter(study_code="CODE").count() == 3


def test_decisions_approve_and_reject_per_assignment(stub, turk) -> None:
    study = mturk_study()
    ps = published(stub, turk, study)
    people = list(Participant.objects.filter(study=study).order_by("external_id"))
    failed_checks(study, people[1])
    synced(stub, ps)
    # Only the Submitted assignment is decidable (the others were approved / rejected on MTurk already).
    stub.add_response("approve_assignment", {}, {"AssignmentId": f"{1:030d}", "RequesterFeedback": ANY})
    summary = platform_decide(platform_study=ps, apply=True, confirm_rejections=True, sync=False)
    assert summary["sent"] == 1 and Decision.objects.get().state == CallState.SENT


def test_a_rejection_feedback_over_awss_limit_is_refused(stub, turk) -> None:
    from core.errors import ApplicationError

    study = mturk_study()
    ps = published(stub, turk, study)
    people = list(Participant.objects.filter(study=study).order_by("external_id"))
    failed_checks(study, people[0])
    synced(stub, ps)
    with pytest.raises(ApplicationError, match="at most 1024"):
        platform_decide(platform_study=ps, apply=True, confirm_rejections=True, sync=False,
                        reject_message="x" * 1025)
    assert not Decision.objects.exists()


def test_bonus_uses_the_ledger_row_id_as_unique_request_token(stub, turk) -> None:
    ps = published(stub, turk, mturk_study())
    workers = synced(stub, ps)
    # Approved: the worker of the Submitted assignment and the Approved one (not the Rejected one).
    for n, worker in ((1, workers[0]), (2, workers[1])):
        stub.add_response("send_bonus", {}, {"WorkerId": worker, "BonusAmount": "0.50", "AssignmentId": f"{n:030d}",
                                             "Reason": ANY, "UniqueRequestToken": ANY})
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True, sync=False)
    assert summary["calls_made"] == 2
    rows = list(BonusPayment.objects.order_by("worker_id"))
    assert [r.state for r in rows] == [BonusPayment.State.PAID] * 2
    sent_tokens = [call["UniqueRequestToken"] for call in _sent(stub, "SendBonus")]
    assert sorted(sent_tokens) == sorted(str(r.pk) for r in rows)
    assert all(f"[ref {r.pk}]" in c["Reason"] for r, c in zip(rows, sorted(_sent(stub, "SendBonus"),
                                                                           key=lambda c: c["WorkerId"]), strict=True))


def test_a_bonus_whose_outcome_is_unknown_is_not_sent_again(stub, turk) -> None:
    ps = published(stub, turk, mturk_study())
    synced(stub, ps)
    stub.add_client_error("send_bonus", service_error_code="ServiceFault", http_status_code=500)
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True, sync=False)
    assert summary["stopped"] == "outcome unknown" and summary["calls_made"] == 1
    assert BonusPayment.objects.filter(state=BonusPayment.State.UNKNOWN).count() == 1
    assert BonusPayment.objects.filter(state=BonusPayment.State.PENDING).count() == 1


def test_an_unknown_bonus_older_than_the_tokens_24_hours_is_flagged_with_what_to_check(stub, turk) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from platforms.admin.ledger import what_to_check

    ps = published(stub, turk, mturk_study())
    synced(stub, ps)
    stub.add_client_error("send_bonus", service_error_code="ServiceFault", http_status_code=500)
    platform_bonus(platform_study=ps, flat="0.50", apply=True, sync=False)
    row = BonusPayment.objects.get(state=BonusPayment.State.UNKNOWN)
    fresh = what_to_check(row)
    assert f"[ref {row.pk}]" in fresh and "24 hours" not in fresh  # within the day: the token still protects it
    BonusPayment.objects.filter(pk=row.pk).update(sent_at=timezone.now() - timedelta(hours=25))
    row.refresh_from_db()
    stale = what_to_check(row)
    assert "more than 24 hours ago" in stale and "UniqueRequestToken protects a bonus for 24 hours only" in stale
    assert f"Check ListBonusPayments for assignment {row.submission.external_id}" in stale
    assert "before resolving it as not paid" in stale


def test_messages_go_in_chunks_of_100(stub, turk) -> None:
    study = mturk_study()
    ps = published(stub, turk, study)
    from platforms.models import PlatformSubmission

    for n in range(150):
        PlatformSubmission.objects.create(platform_study=ps, external_id=f"X{n:029d}", worker_id=f"W{n:012d}",
                                          status="Submitted")
    stub.add_response("notify_workers", {"NotifyWorkersFailureStatuses": []},
                      {"Subject": "Thanks", "MessageText": "Bonuses are on their way.", "WorkerIds": ANY})
    stub.add_response("notify_workers", {"NotifyWorkersFailureStatuses": []},
                      {"Subject": "Thanks", "MessageText": "Bonuses are on their way.", "WorkerIds": ANY})
    summary = platform_message(platform_study=ps, subject="Thanks", body="Bonuses are on their way.", apply=True)
    assert summary["sent"] == 150 and [len(c["WorkerIds"]) for c in _sent(stub, "NotifyWorkers")] == [100, 50]
    again = platform_message(platform_study=ps, subject="Thanks", body="Bonuses are on their way.", apply=True)
    assert again["recipients"] == 0 and again["already_messaged"] == 150


def test_block_list_sync_grants_and_revokes(stub, turk) -> None:
    from annotation.models import WorkerBlock

    PlatformAccount.objects.filter(pk=turk.pk).update(block_list_id="Q" * 30)
    turk.refresh_from_db()
    WorkerBlock.objects.create(platform="mturk", external_id="ANEW000000001")
    stub.add_response("list_workers_with_qualification_type",
                      {"Qualifications": [{"WorkerId": "AOLD000000001", "QualificationTypeId": "Q" * 30}]},
                      {"QualificationTypeId": "Q" * 30, "Status": "Granted", "MaxResults": 100})
    stub.add_response("associate_qualification_with_worker", {}, {
        "QualificationTypeId": "Q" * 30, "WorkerId": "ANEW000000001", "IntegerValue": 1, "SendNotification": False})
    stub.add_response("disassociate_qualification_from_worker", {}, {
        "QualificationTypeId": "Q" * 30, "WorkerId": "AOLD000000001", "Reason": ANY})
    summary = block_list_sync(account=turk)
    assert summary["added"] == 1 and summary["removed"] == 1


def _sent(stub: Any, operation: str) -> list[dict[str, Any]]:
    """The parameters of every call of `operation` the stubbed client made (recorded by a before-call hook)."""
    return [params for op, params in getattr(stub, "calls", []) if op == operation]


@pytest.fixture(autouse=True)
def _record_calls(request: Any) -> None:
    if "stub" not in request.fixturenames:
        return
    stub = request.getfixturevalue("stub")
    stub.calls = []

    def record(params: dict[str, Any], model: Any, **kwargs: Any) -> None:
        stub.calls.append((model.name, dict(params)))

    stub.client.meta.events.register("provide-client-params.mturk.*", record)
    return None


_ = Decimal
