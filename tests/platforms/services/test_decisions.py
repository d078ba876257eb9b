"""Decisions through Prolific's API: a dry run that shows exactly what would be sent, bulk approval, rejections with
a category from Prolific's enumeration and a message of at least 100 characters, return requests, each sent once."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from annotation.models import Participant
from core.errors import ApplicationError
from platforms.models import CallState, Decision
from platforms.services.decisions import CATEGORIES, MIN_REJECTION_MESSAGE, platform_decide
from platforms.services.sync import platform_sync
from tests import factories as f
from tests.platforms.conftest import failed_checks, on_prolific, paid_study

pytestmark = pytest.mark.django_db
APPROVE = r"/api/v1/submissions/bulk-approve/"
TRANSITION = r"/api/v1/submissions/\w+/transition/"
RETURN = r"/api/v1/submissions/\w+/request-return/"


@pytest.fixture
def decided(prolific_account, fake_prolific):  # noqa: ANN201
    """p1 approved, p2 with two failed attention checks (reject), a fourth person with no answers (return)."""
    study = paid_study()
    people = list(Participant.objects.filter(study=study).order_by("external_id"))
    failed_checks(study, people[1])
    idle = f.ParticipantFactory(study=study, external_id="d" * 24)
    ps = on_prolific(study, prolific_account, fake_prolific, statuses={idle.external_id: "ACTIVE"})
    return ps, people, idle


def test_a_dry_run_shows_exactly_what_would_be_sent_and_sends_nothing(decided, fake_prolific) -> None:
    ps, people, idle = decided
    summary = platform_decide(platform_study=ps)
    assert summary["dry_run"] and summary["approve"] == 2 and summary["reject"] == 1 and summary["return"] == 1
    approve = next(c for c in summary["calls"] if c["path"] == APPROVE)
    subs = {s.worker_id: s.external_id for s in ps.submissions.all()}
    assert sorted(approve["body"]["submission_ids"]) == sorted([subs[people[0].external_id],
                                                                subs[people[2].external_id]])
    reject = next(c for c in summary["calls"] if c["body"].get("action") == "REJECT")
    assert reject["path"] == f"/api/v1/submissions/{subs[people[1].external_id]}/transition/"
    assert reject["body"]["rejection_category"] in CATEGORIES
    assert len(reject["body"]["message"]) >= MIN_REJECTION_MESSAGE and "failed 2 of 2" in reject["body"]["message"]
    ret = next(c for c in summary["calls"] if "request-return" in c["path"])
    assert ret["path"] == f"/api/v1/submissions/{subs[idle.external_id]}/request-return/"
    assert ret["body"]["request_return_reasons"] and Decision.objects.count() == 0
    assert [c for c in fake_prolific.calls if c.method == "POST"
            and ("transition" in c.path and "studies" not in c.path or "bulk" in c.path or "return" in c.path)] == []


def test_apply_sends_each_decision_once_and_stores_the_answer(decided, fake_prolific) -> None:
    ps, people, idle = decided
    summary = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert summary["sent"] == 4 and summary["failed"] == summary["unknown"] == 0
    statuses = {s["participant_id"]: s["status"] for s in fake_prolific.submissions.values()}
    assert statuses[people[0].external_id] == statuses[people[2].external_id] == "APPROVED"
    assert statuses[people[1].external_id] == "REJECTED"
    returned = next(s for s in fake_prolific.submissions.values() if s["participant_id"] == idle.external_id)
    assert returned["return_requested"]
    rows = {d.worker_id: d for d in Decision.objects.all()}
    assert {d.state for d in rows.values()} == {CallState.SENT}
    assert rows[people[1].external_id].response["status"] == "REJECTED"
    assert rows[people[1].external_id].request["body"]["action"] == "REJECT"
    calls = len([c for c in fake_prolific.calls if c.method == "POST"])
    again = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)  # nothing new
    assert again["calls_made"] == 0 and len([c for c in fake_prolific.calls if c.method == "POST"]) == calls
    assert all("already decided" in s["reason"] for s in again["skipped"])


def test_rejections_need_an_explicit_confirmation(decided, fake_prolific) -> None:
    ps, _, _ = decided
    with pytest.raises(ApplicationError) as exc:
        platform_decide(platform_study=ps, apply=True)
    assert exc.value.code == "confirmation_required" and Decision.objects.count() == 0
    assert fake_prolific.calls_to("POST", APPROVE) == []


def test_a_rejection_message_under_100_characters_is_refused(decided, fake_prolific) -> None:
    ps, _, _ = decided
    with pytest.raises(ApplicationError) as exc:
        platform_decide(platform_study=ps, apply=True, confirm_rejections=True, reject_message="You failed checks.")
    assert exc.value.code == "message_too_short" and "100" in exc.value.message
    assert Decision.objects.count() == 0 and fake_prolific.calls_to("POST", TRANSITION) == []


def test_an_unknown_outcome_is_confirmed_by_a_later_sync_not_sent_again(decided, fake_prolific) -> None:
    ps, people, _ = decided
    fake_prolific.fail("POST", TRANSITION, "timeout_after", times=4)  # the rejection is made; no answer comes
    summary = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert summary["unknown"] == 1
    rejected = Decision.objects.get(kind="reject")
    assert rejected.state == CallState.UNKNOWN
    sends = len(fake_prolific.calls_to("POST", TRANSITION))
    platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert len(fake_prolific.calls_to("POST", TRANSITION)) == sends
    rejected.refresh_from_db()
    assert rejected.state == CallState.CONFIRMED  # the sync read it REJECTED on Prolific


def test_the_command_is_a_dry_run_unless_apply(decided, fake_prolific, capsys) -> None:
    ps, _, _ = decided
    call_command("platform_decide", "--study", ps.study.slug)
    dry = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert dry["ok"] and dry["dry_run"] and dry["reject"] == 1 and Decision.objects.count() == 0
    call_command("platform_decide", "--study", ps.study.slug, "--apply")
    done = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert done["ok"] and done["sent"] == 4


def test_only_awaiting_review_submissions_are_approved_or_rejected(prolific_account, fake_prolific) -> None:
    study = paid_study()
    people = list(Participant.objects.filter(study=study).order_by("external_id"))
    ps = on_prolific(study, prolific_account, fake_prolific, statuses={people[0].external_id: "ACTIVE"})
    summary = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert summary["approve"] == 2
    skipped = {s["worker"]: s["reason"] for s in summary["skipped"]}
    assert "ACTIVE" in skipped[people[0].external_id]
    platform_sync(platform_study=ps)
    assert not Decision.objects.filter(worker_id=people[0].external_id).exists()


def test_someone_prolific_knows_and_stylecrowd_does_not_is_left_alone(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    stranger = fake_prolific.add_submission(ps.external_id, "e" * 24)
    summary = platform_decide(platform_study=ps, apply=True, confirm_rejections=True)
    assert "e" * 24 in summary["sync"]["unknown_participants"]
    assert any(s["submission"] == stranger["id"] and "not a StyleCrowd participant" in s["reason"]
               for s in summary["skipped"])
    assert fake_prolific.submissions[stranger["id"]]["status"] == "AWAITING REVIEW"
