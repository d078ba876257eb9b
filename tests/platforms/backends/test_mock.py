"""The mock platform (platforms/backends/mock.py) through the services: publish -> sync -> decide -> bonus, with the
dry runs by default, the decision and ledger rows stored before each call, no repeat of a sent bonus; its people
are anonymous-link participants, erased and pseudonymised as such."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import Participant, Study
from core.pseudonyms import person_key
from platforms.backends import backend_for, people_platform
from platforms.backends.base import PlannedCall
from platforms.backends.mock import STATE, MockBackend, mock_reset
from platforms.models import BonusPayment, CallState, Decision, PlatformAccount, PlatformStudy, PlatformSubmission
from platforms.services.accounts import account_create, account_default
from platforms.services.bonuses import platform_bonus
from platforms.services.decisions import platform_decide
from platforms.services.publish import platform_publish
from platforms.services.sync import platform_sync
from tests.platforms.conftest import failed_checks, paid_study

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_mock(platform_settings: Any) -> Iterator[None]:
    mock_reset()
    yield
    mock_reset()


@pytest.fixture
def mock_account(db: Any) -> PlatformAccount:
    return account_create(name="demo", platform="mock")


def _anonymous_study() -> Study:
    """A study whose participants came by the anonymous link, as the mock platform's people do."""
    study = paid_study()
    Study.objects.filter(pk=study.pk).update(platform="any", allow_anonymous=True)
    Participant.objects.filter(study=study).update(platform="anonymous")
    study.refresh_from_db()
    return study


def _published(account: PlatformAccount) -> PlatformStudy:
    study = _anonymous_study()
    platform_publish(study=study, account=account, publish=True)
    return PlatformStudy.objects.select_related("study", "account").get(study=study)


def _mock_statuses(ps: PlatformStudy) -> dict[str, str]:
    return {row["worker"]: row["status"] for row in STATE.studies[ps.external_id].submissions.values()}


def test_an_account_needs_no_credentials_and_refuses_a_token() -> None:
    account = account_create(name="demo", platform="mock")
    assert account.user_id == "mock-researcher" and not account.token_encrypted
    with pytest.raises(Exception, match="takes no token"):
        account_create(name="other", platform="mock", token="secret")
    assert account_default(platform="mock") is not None  # the mock platform always has an account


def test_publish_creates_the_draft_then_publishes_and_keeps_the_anonymous_link(mock_account) -> None:
    study = _anonymous_study()
    draft = platform_publish(study=study, account=mock_account)
    assert draft["state"] == PlatformStudy.State.DRAFT and draft["steps"] == ["draft created"]
    assert draft["sent"]["path"] == "/studies/" and draft["sent"]["body"]["places"] == draft["places"]
    assert STATE.studies[draft["external_id"]].status == "UNPUBLISHED"
    published = platform_publish(study=study, account=mock_account, publish=True)
    assert published["state"] == PlatformStudy.State.PUBLISHED and published["steps"] == ["draft exists",
                                                                                           "published"]
    assert STATE.studies[published["external_id"]].status == "ACTIVE"
    again = platform_publish(study=study, account=mock_account, publish=True)
    assert again["steps"] == ["draft exists", "already published"] and len(STATE.studies) == 1
    study.refresh_from_db()
    assert study.platform == "any" and study.allow_anonymous  # the mock's people enter by the anonymous link


def test_sync_reads_a_submission_for_each_participant_of_the_link(mock_account) -> None:
    ps = _published(mock_account)
    people = sorted(Participant.objects.filter(study=ps.study).values_list("external_id", flat=True))
    summary = platform_sync(platform_study=ps)
    assert summary["submissions"] == len(people) == 3 and summary["unknown_participants"] == []
    assert summary["by_status"] == {"AWAITING REVIEW": 3} and summary["external_status"] == "ACTIVE"
    rows = PlatformSubmission.objects.filter(platform_study=ps)
    assert sorted(rows.values_list("worker_id", flat=True)) == people
    assert all(row.participant is not None and row.participant.platform == "anonymous" for row in rows)
    assert platform_sync(platform_study=ps)["new"] == 0  # the same people again: nothing new


def test_decide_is_a_dry_run_by_default_then_stores_each_decision_before_its_call(mock_account,
                                                                                  monkeypatch) -> None:
    ps = _published(mock_account)
    worst = Participant.objects.filter(study=ps.study).order_by("external_id").first()
    failed_checks(ps.study, worst)
    plan = platform_decide(platform_study=ps)
    assert plan["dry_run"] is True and plan["approve"] == 2 and plan["reject"] == 1
    assert {call["path"] for call in plan["calls"]} == {"/submissions/transition/"}
    assert not Decision.objects.exists()
    assert set(_mock_statuses(ps).values()) == {"AWAITING REVIEW"}  # nothing was sent

    seen: list[str] = []
    real_send = MockBackend.send

    def send(self: MockBackend, call: PlannedCall) -> Any:
        ids = call.body["submission_ids"]
        rows = Decision.objects.filter(submission__external_id__in=ids)
        assert rows.count() == len(ids) and {r.state for r in rows} == {CallState.SENDING}
        assert all(r.request == call.describe() for r in rows)  # what is sent, stored before it is sent
        seen.append(call.body["action"])
        return real_send(self, call)

    monkeypatch.setattr(MockBackend, "send", send)
    sent = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert sent["sent"] == 3 and sent["unknown"] == sent["failed"] == 0 and sorted(seen) == ["approve", "reject"]
    statuses = _mock_statuses(ps)
    assert statuses.pop(worst.external_id) == "REJECTED" and set(statuses.values()) == {"APPROVED"}
    again = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert again["sent"] == 0 and len(again["skipped"]) == 3  # decided once


def test_bonus_dry_run_then_each_row_stored_before_its_call_and_never_paid_twice(mock_account,
                                                                                monkeypatch) -> None:
    ps = _published(mock_account)
    platform_decide(platform_study=ps, apply=True)
    dry = platform_bonus(platform_study=ps, flat="0.50")
    assert dry["dry_run"] is True and dry["rows_added"] == 3 and len(dry["calls"]) == 3
    assert not BonusPayment.objects.exists() and not STATE.bonuses

    real_send = MockBackend.send

    def send(self: MockBackend, call: PlannedCall) -> Any:
        if call.operation == "bonus":
            row = BonusPayment.objects.get(pk=call.body["token"])  # the ledger row's id is the request token
            assert row.state == BonusPayment.State.CLAIMED and row.worker_id == call.body["worker_id"]
        return real_send(self, call)

    monkeypatch.setattr(MockBackend, "send", send)
    paid = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert paid["calls_made"] == 3 and paid["stopped"] is None
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.PAID}
    assert sorted(p["worker_id"] for p in STATE.bonuses.values()) == sorted(
        BonusPayment.objects.values_list("worker_id", flat=True))
    again = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert again["rows_added"] == 0 and again["calls_made"] == 0 and len(STATE.bonuses) == 3
    # The same request again (a row resolved "not paid" after a lost answer) pays nothing more on the platform.
    monkeypatch.undo()
    row = BonusPayment.objects.select_related("submission").first()
    backend = backend_for(mock_account)
    repeat = backend.send(backend.bonus_call(worker_id=row.worker_id, assignment_id=row.submission.external_id,
                                             amount=row.amount, reason="again", token=str(row.pk)))
    assert repeat["repeated"] is True and len(STATE.bonuses) == 3


def test_the_mock_platform_people_are_keyed_and_erased_as_anonymous_participants(mock_account) -> None:
    from core.erasure import participant_erase

    ps = _published(mock_account)
    platform_sync(platform_study=ps)
    person = Participant.objects.filter(study=ps.study).order_by("external_id").first()
    raw = person.external_id
    assert people_platform("mock") == "anonymous"
    participant_erase(platform="anonymous", external_id=raw, apply=True)
    key = person_key(platform="anonymous", external_id=raw)
    assert PlatformSubmission.objects.filter(platform_study=ps, worker_id=key).count() == 1
    assert not PlatformSubmission.objects.filter(worker_id=raw).exists()
    # A later sync of the platform that still knows the raw id stores only the key.
    platform_sync(platform_study=ps)
    assert not PlatformSubmission.objects.filter(worker_id=raw).exists()


def test_the_command_line_creates_a_mock_account(capsys) -> None:
    import json

    from django.core.management import call_command

    call_command("platform_account", "create", "--name", "mock", "--platform", "mock")
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "mock" in json.dumps(summary) and PlatformAccount.objects.get(name="mock").platform == "mock"
