"""platforms.services.preflight: before anything is spent, the study's cost from Prolific's own calculator, the
participants eligible for its filters (a warning when fewer than its places), and a test participant's run through
the real link, checked on the platform's side — every request validated by the fake against Prolific's API
description (the fixture fails the test on any violation); MTurk's cost computed from its fees; the mock's."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.management import call_command

from annotation.models import Participant
from annotation.services.session_creation import session_create
from core.errors import ApplicationError
from platforms.backends.base import StudyPlan
from platforms.backends.mturk import MTurkBackend, mturk_fee
from platforms.models import PlatformAccount, PlatformStudy
from platforms.services.accounts import account_create
from platforms.services.preflight import platform_test_run, platform_test_run_check, preflight_of
from platforms.services.publish import places_for, platform_preflight, platform_publish
from tests import factories as f
from tests.platforms.conftest import paid_study

pytestmark = pytest.mark.django_db
COST = r"/api/v1/study-cost-calculator/"
COUNT = r"/api/v1/eligibility-count/"
CREATE = r"^/api/v1/studies/$"


def test_the_draft_step_asks_the_cost_and_the_eligible_count_before_creating_the_draft(
        prolific_account, fake_prolific) -> None:
    study = paid_study()
    places = places_for(study)
    summary = platform_publish(study=study, account=prolific_account, filters=[
        {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}}])
    preflight = summary["preflight"]
    # 2.00 GBP a place (12/h for 10 min); Prolific's answer: rewards + 33.3 % fee + VAT on the fee, in pence
    rewards = 200 * places
    fee = round(rewards * 0.333)
    total = Decimal(rewards + fee + round(fee * 0.2)) / 100
    assert preflight["cost"]["total"] == f"{total:.2f}" and preflight["cost"]["rewards"] == f"{rewards / 100:.2f}"
    assert preflight["cost"]["fees"] == f"{total - Decimal(rewards) / 100:.2f}" and preflight["currency"] == "GBP"
    assert preflight["cost"]["text"].startswith(f"£{total:.2f} in all") and not preflight["cost"]["computed"]
    assert "Prolific's study cost calculator" in preflight["cost"]["source"]
    assert preflight["eligible"]["count"] == 5000 and preflight["warnings"] == []
    # exactly what was asked, in the spec's shapes, before the draft was created
    (cost,) = fake_prolific.calls_to("POST", COST)
    assert cost.body == {"reward": 200.0, "total_available_places": float(places)}
    (count,) = fake_prolific.calls_to("POST", COUNT)
    assert count.body["workspace_id"] == "a" * 24
    prolific_account.refresh_from_db()  # its block list was made for the draft
    assert {"filter_id": "approval_rate", "selected_range": {"lower": 95.0, "upper": 100.0}} in count.body["filters"]
    assert {"filter_id": "participant_group_blocklist",
            "selected_values": [prolific_account.block_list_id]} in count.body["filters"]
    order = [c.path for c in fake_prolific.calls]
    assert order.index("/api/v1/study-cost-calculator/") < order.index("/api/v1/studies/")


def test_fewer_eligible_participants_than_places_is_a_warning(prolific_account, fake_prolific) -> None:
    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    fake_prolific.eligible = 0  # Prolific's "fewer than 25"
    preflight = platform_preflight(platform_study=PlatformStudy.objects.get(study=study))
    assert preflight["eligible"]["text"].startswith("fewer than 25 eligible participants")
    assert preflight["warnings"] == [
        f"fewer than 25 eligible participants for {places_for(study)} places: the study may never fill. Widen the "
        "filters (devices, filters, allow list) or lower the places before publishing."]
    fake_prolific.eligible = 1
    assert platform_preflight(platform_study=PlatformStudy.objects.get(study=study))["warnings"][0].startswith(
        f"only 1 eligible participants for {places_for(study)} places")


def test_a_429_is_waited_out_and_a_5xx_is_said_without_stopping_the_draft(prolific_account, fake_prolific) -> None:
    study = paid_study()
    fake_prolific.fail("POST", COST, "429", retry_after=0)
    fake_prolific.fail("POST", COUNT, "500", times=10)  # every attempt
    summary = platform_publish(study=study, account=prolific_account)
    assert len(fake_prolific.calls_to("POST", COST)) == 2  # the 429, then the answer (a read: safe to repeat)
    assert summary["preflight"]["cost"]["total"]
    assert "error" in summary["preflight"]["eligible"] and "answered 500" in summary["preflight"]["eligible"]["error"]
    assert summary["preflight"]["warnings"][0].startswith("eligible participants: Prolific answered 500")
    assert summary["state"] == "draft" and len(fake_prolific.calls_to("POST", CREATE)) == 1


def test_a_test_participant_runs_the_draft_and_the_completion_code_is_checked(prolific_account, fake_prolific) -> None:
    study = paid_study()
    with pytest.raises(ApplicationError) as exc:  # nothing on Prolific yet
        platform_test_run(platform_study=PlatformStudy.objects.create(study=study, account=prolific_account,
                                                                       platform="prolific"))
    assert exc.value.code == "no_draft"
    PlatformStudy.objects.filter(study=study).delete()
    platform_publish(study=study, account=prolific_account)
    ps = PlatformStudy.objects.get(study=study)
    run = platform_test_run(platform_study=ps, email="tester@example.org")
    assert run["test_participant_created"] and run["study_url"].endswith(run["test_study_id"])
    assert fake_prolific.calls_to("POST", r"/api/v1/researchers/participants/")[0].body == {
        "email": "tester@example.org"}
    assert fake_prolific.calls_to("POST", rf"/api/v1/studies/{ps.external_id}/test-study")
    assert fake_prolific.studies[ps.external_id]["status"] == "UNPUBLISHED"  # the draft itself is not published

    before = platform_test_run_check(platform_study=ps, test_study_id=run["test_study_id"])
    assert not before["completion_code_works"] and before["submissions"] == []
    # the test participant comes through the real link: the test study's STUDY_ID is let in (any other is not)
    tester = fake_prolific.test_participants[0]
    result = session_create(slug=study.slug, participant_id=tester, platform="prolific",
                            study_ref=run["test_study_id"], session_ref="testsession1")
    with pytest.raises(ApplicationError, match="another Prolific study"):
        session_create(slug=study.slug, participant_id="f" * 24, platform="prolific", study_ref="e" * 24,
                       session_ref="s2")
    answer = f.ResponseFactory(study_item=study.items.first(), participant=result.batch.participant,
                               batch=result.batch)
    # … and is sent back to Prolific with the study's code
    fake_prolific.add_submission(run["test_study_id"], tester, study_code=study.completion_code)
    after = platform_test_run_check(platform_study=ps, test_study_id=run["test_study_id"])
    assert after["completion_code_works"] and after["submissions"] == [
        {"status": "AWAITING REVIEW", "code": study.completion_code, "code_is": "completion"}]
    assert tester not in json.dumps(after)  # no participant id leaves
    # the test's answers are never data
    answer.refresh_from_db()
    assert after["test_answers_excluded"] == 1 and not answer.is_valid
    assert Participant.objects.get(external_id=tester).excluded
    assert platform_test_run_check(platform_study=ps, test_study_id=run["test_study_id"])[
        "test_answers_excluded"] == 0  # checked again: nothing more
    with pytest.raises(ApplicationError, match="not one of its test studies"):
        platform_test_run_check(platform_study=ps, test_study_id="c" * 24)


def test_the_command_prints_the_cost_and_the_eligible_count_in_its_summary(prolific_account, fake_prolific,
                                                                           capsys) -> None:
    study = paid_study()
    call_command("platform_publish", "--study", study.slug, "--account", "lab")
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["ok"] and summary["state"] == "draft"
    assert summary["preflight"]["cost"]["currency"] == "GBP" and summary["preflight"]["cost"]["total"]
    assert summary["preflight"]["eligible"]["count"] == 5000


def _plan(places: int, reward_cents: int = 200, currency: str = "USD") -> StudyPlan:
    return StudyPlan(title="t", description="d", participant_url="https://x/s/t/", places=places,
                     reward_cents=reward_cents, currency=currency, estimated_minutes=10, maximum_minutes=30,
                     completion_code="C", screened_out_code="S", screen_out_reward_cents=0, return_code="R",
                     max_submissions_per_participant=1, devices=[], filters=[], block_list_id="", allow_list_id="",
                     labels=[], idempotency_key="k", slug="t")


def test_mturk_has_no_calculator_its_cost_is_computed_from_its_fees_and_said_so() -> None:
    backend = MTurkBackend(PlatformAccount(name="turk", platform="mturk", sandbox=True))
    few, many = preflight_of(backend=backend, plan=_plan(9)), preflight_of(backend=backend, plan=_plan(10))
    assert few["cost"]["total"] == "21.60" and few["cost"]["fees"] == "3.60"    # 9 × (2.00 + 20 %)
    assert many["cost"]["total"] == "28.00" and many["cost"]["fees"] == "8.00"  # 10 × (2.00 + 40 %)
    assert many["cost"]["computed"] and "MTurk has no cost calculator" in many["cost"]["source"]
    assert many["eligible"] == {"count": None, "text": "mturk does not say how many people are eligible"}
    assert mturk_fee(Decimal("0.02"), 1) == Decimal("0.01")  # MTurk's minimum fee


def test_the_mock_charges_no_fee(platform_settings) -> None:
    preflight = platform_preflight(platform_study=PlatformStudy.objects.create(
        study=paid_study(), account=account_create(name="demo", platform="mock"), platform="mock"))
    assert preflight["cost"]["fees"] == "0.00" and preflight["cost"]["computed"]
    assert preflight["eligible"]["count"] is None and preflight["warnings"] == []
