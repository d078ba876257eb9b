"""Publishing on Prolific in two steps (a draft, then publish), creating nothing twice; syncing every page of
submissions, freeing the slots of people who returned or timed out at once."""
from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Batch, Participant, Reservation, Response, Study
from annotation.services.engine import batch_reserve
from core.errors import ApplicationError
from platforms.models import PlatformStudy, PlatformSubmission
from platforms.services.publish import platform_publish
from platforms.services.sync import platform_sync
from tests import factories as f
from tests.platforms.conftest import on_prolific, paid_study

pytestmark = pytest.mark.django_db
CREATE = r"^/api/v1/studies/$"
PUBLISH = r"/api/v1/studies/\w+/transition/"


def test_the_draft_carries_link_codes_places_reward_and_block_list(prolific_account, fake_prolific) -> None:
    study = paid_study()
    summary = platform_publish(study=study, account=prolific_account, devices=["desktop"],
                               screen_out_reward_cents=10, filters=[{"filter_id": "approval_rate",
                                                                     "selected_range": {"lower": 95}}])
    assert summary["state"] == "draft" and summary["external_id"]
    body = fake_prolific.calls_to("POST", CREATE)[0].body
    assert body["external_study_url"] == (f"https://crowd.example.org/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                                          "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert body["prolific_id_option"] == "url_parameters"
    codes = {c["code"]: c for c in body["completion_codes"]}
    assert codes[study.completion_code]["code_type"] == "COMPLETED"
    assert codes[study.completion_code]["actions"] == [{"action": "MANUALLY_REVIEW"}]
    screened = codes[study.screened_out_code]
    assert screened["code_type"] == "FIXED_SCREENOUT"
    assert screened["actions"][0]["action"] == "FIXED_SCREEN_OUT_PAYMENT"
    assert screened["actions"][0]["fixed_screen_out_reward"] == 10
    returned = next(c for c in body["completion_codes"] if c["actor"] == "researcher")
    assert returned["actions"][0]["action"] == "REQUEST_RETURN"
    # places: 2 items × k = 3 slots / 2 items per batch; reward: £12/h × 10 min = £2.00
    assert body["total_available_places"] == 3 and body["reward"] == 200
    assert body["estimated_completion_time"] == 10 and body["maximum_allowed_time"] >= 30
    assert body["device_compatibility"] == ["desktop"]
    filter_ids = [flt["filter_id"] for flt in body["filters"]]
    assert filter_ids == ["approval_rate", "participant_group_blocklist"]
    prolific_account.refresh_from_db()
    assert body["filters"][1]["selected_values"] == [prolific_account.block_list_id]
    assert body["project"] == prolific_account.project_id
    study.refresh_from_db()
    assert study.prolific_study_id == summary["external_id"] and study.platform == "prolific"
    assert fake_prolific.studies[summary["external_id"]]["status"] == "UNPUBLISHED"
    assert fake_prolific.calls_to("POST", PUBLISH) == []  # publishing is a second, explicit step


def test_publishing_twice_creates_nothing_twice(prolific_account, fake_prolific) -> None:
    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    platform_publish(study=study, account=prolific_account)
    assert len(fake_prolific.calls_to("POST", CREATE)) == 1
    first = platform_publish(study=study, account=prolific_account, publish=True)
    again = platform_publish(study=study, account=prolific_account, publish=True)
    assert first["state"] == again["state"] == "published" and "already published" in again["steps"]
    assert len(fake_prolific.calls_to("POST", CREATE)) == 1 and len(fake_prolific.calls_to("POST", PUBLISH)) == 1
    assert fake_prolific.studies[first["external_id"]]["status"] == "ACTIVE"


def test_an_unknown_creation_is_looked_for_before_creating_again(prolific_account, fake_prolific) -> None:
    study = paid_study()
    fake_prolific.fail("POST", CREATE, "timeout_after")  # Prolific creates it; the answer is lost
    with pytest.raises(ApplicationError) as exc:
        platform_publish(study=study, account=prolific_account)
    assert exc.value.details["outcome"] == "unknown" and "again" in exc.value.message
    assert PlatformStudy.objects.get(study=study).state == PlatformStudy.State.CREATE_UNKNOWN
    summary = platform_publish(study=study, account=prolific_account)
    assert summary["state"] == "draft" and len(fake_prolific.calls_to("POST", CREATE)) == 1
    assert summary["external_id"] == next(iter(fake_prolific.studies))


def test_a_reward_below_prolifics_minimum_is_refused_and_says_so(prolific_account, fake_prolific) -> None:
    study = paid_study()
    Study.objects.filter(pk=study.pk).update(target_hourly_pay=Decimal("4.50"))
    study.refresh_from_db()
    with pytest.raises(ApplicationError) as exc:
        platform_publish(study=study, account=prolific_account)
    assert exc.value.code == "reward_below_minimum"
    assert "£4.50 an hour" in exc.value.message and "£6.00" in exc.value.message
    assert fake_prolific.calls_to("POST", CREATE) == [] and not PlatformStudy.objects.exists()


def test_a_study_that_is_not_open_is_refused(prolific_account, fake_prolific) -> None:
    study = paid_study()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    study.refresh_from_db()
    with pytest.raises(ApplicationError, match="open it first"):
        platform_publish(study=study, account=prolific_account)
    assert fake_prolific.calls_to("POST", CREATE) == []


def test_a_study_without_an_account_keeps_todays_flow(db, platform_settings) -> None:
    study = paid_study()
    with pytest.raises(ApplicationError) as exc:
        platform_publish(study=study)
    assert exc.value.code == "no_account" and "decisions CSV" in exc.value.message
    assert not PlatformStudy.objects.exists()


def test_prolific_api_token_alone_is_an_account(db, fake_prolific, platform_settings, monkeypatch) -> None:
    monkeypatch.setenv("PROLIFIC_API_TOKEN", fake_prolific.token)
    platform_settings.PROLIFIC_API_TOKEN = fake_prolific.token
    platform_settings.PROLIFIC_API_URL = fake_prolific.url
    summary = platform_publish(study=paid_study())
    assert summary["account"] == "prolific-env" and summary["state"] == "draft"


def test_sync_reads_every_page_and_maps_participants(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    for n in range(4):
        fake_prolific.add_submission(ps.external_id, f"{n + 100:024x}", status="RETURNED")
    summary = platform_sync(platform_study=ps)
    lists = [c for c in fake_prolific.calls_to("GET", r"^/api/v1/submissions/$")]
    assert len(lists) == 4  # 7 submissions, 2 a page: every page, following _links.next
    assert summary["submissions"] == 7 == PlatformSubmission.objects.filter(platform_study=ps).count()
    assert summary["by_status"] == {"AWAITING REVIEW": 3, "RETURNED": 4}
    assert summary["unknown_participants"] == sorted(f"{n + 100:024x}" for n in range(4))
    mapped = PlatformSubmission.objects.filter(platform_study=ps, participant__isnull=False).count()
    assert mapped == 3


def test_a_returned_submission_frees_its_slots_at_once(prolific_account, fake_prolific) -> None:
    study = paid_study()
    f.annotated_study(answers=[[]] * 4, study=study)  # more open items
    ps = on_prolific(study, prolific_account, fake_prolific)
    leaver = f.ParticipantFactory(study=study, external_id="c" * 24)
    batch = Batch.objects.create(study=study, participant=leaver, number=1, token="r" * 40, state="items",
                                 session_ref="f" * 24, started_at=timezone.now(),
                                 expires_at=timezone.now() + timedelta(minutes=30))
    batch_reserve(batch=batch)
    held = Reservation.objects.filter(batch=batch, released=False, study_item__isnull=False)
    assert held.exists()
    item = held.first().study_item
    Response.objects.create(study=study, participant=leaver, study_item=item, answer="S2-S1", is_correct=True,
                            answered_at=timezone.now(), batch=batch)
    Reservation.objects.filter(batch=batch, study_item=item).update(answered_at=timezone.now())
    fake_prolific.add_submission(ps.external_id, leaver.external_id, status="RETURNED", submission_id="f" * 24)
    summary = platform_sync(platform_study=ps)
    assert summary["slots_released"] >= 1
    batch.refresh_from_db()
    leaver.refresh_from_db()
    assert batch.state == Batch.State.EXPIRED  # not after the grace period: now
    assert not Reservation.objects.filter(participant=leaver, released=False).exists()
    assert leaver.excluded and "returned" in leaver.exclusion_reason  # withdrew: the answer is not used
    assert not Response.objects.filter(participant=leaver, is_valid=True).exists()
    again = platform_sync(platform_study=ps)  # idempotent
    assert again["slots_released"] == 0


def test_a_timed_out_submission_frees_open_slots_and_keeps_answers(prolific_account, fake_prolific) -> None:
    study = paid_study()
    f.annotated_study(answers=[[]] * 2, study=study)
    ps = on_prolific(study, prolific_account, fake_prolific)
    slow = f.ParticipantFactory(study=study, external_id="9" * 24)
    batch = Batch.objects.create(study=study, participant=slow, number=1, token="s" * 40, state="items",
                                 started_at=timezone.now(), expires_at=timezone.now() + timedelta(minutes=30))
    batch_reserve(batch=batch)
    fake_prolific.add_submission(ps.external_id, slow.external_id, status="TIMED-OUT")
    platform_sync(platform_study=ps)
    batch.refresh_from_db()
    slow.refresh_from_db()
    assert batch.state == Batch.State.EXPIRED and not slow.excluded
    assert not Reservation.objects.filter(batch=batch, released=False).exists()


def test_the_commands_print_their_summary(prolific_account, fake_prolific, capsys) -> None:
    study = paid_study()
    call_command("platform_publish", "--study", study.slug, "--account", "lab")
    draft = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    call_command("platform_publish", "--study", study.slug, "--publish")
    published = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    fake_prolific.add_submission(published["external_id"], Participant.objects.filter(study=study)
                                 .first().external_id)
    call_command("platform_sync", "--study", study.slug)
    synced = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert draft["ok"] and draft["state"] == "draft" and published["state"] == "published"
    assert synced["ok"] and synced["submissions"] == 1


def test_a_study_prolific_does_not_know_is_a_clear_error(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    PlatformStudy.objects.filter(pk=ps.pk).update(external_id="0" * 24)
    ps.refresh_from_db()
    with pytest.raises(ApplicationError) as exc:
        platform_sync(platform_study=ps)
    assert exc.value.code == "platform_not_found" and exc.value.status == 404
    assert not PlatformSubmission.objects.exists()


def test_the_api_refuses_a_publish_without_an_account_before_queueing(db, platform_settings, api) -> None:
    from core.models import Job
    from tests.helpers import assert_api_error

    study = paid_study()
    response = api.post(f"/api/v1/studies/{study.slug}/platform/publish/", {}, format="json")
    assert_api_error(response, code="no_account", status=409)
    assert not Job.objects.exists() and not PlatformStudy.objects.exists()
