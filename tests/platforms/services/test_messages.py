"""Messages through Prolific (dry run by default, stored, not repeated) and the block and allow lists kept as
Prolific participant groups used as the study's filters."""
from __future__ import annotations

import pytest

from annotation.models import Participant, WorkerBlock
from core.errors import ApplicationError
from platforms.models import CallState, PlatformMessage, PlatformStudy
from platforms.services.lists import block_list_sync
from platforms.services.messages import platform_message
from platforms.services.publish import platform_publish
from platforms.services.sync import platform_sync
from tests.platforms.conftest import on_prolific, paid_study

pytestmark = pytest.mark.django_db


def test_a_message_is_a_dry_run_until_applied_and_is_sent_once(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    platform_sync(platform_study=ps)
    dry = platform_message(platform_study=ps, body="Thank you! Bonuses follow this week.")
    assert dry["dry_run"] and dry["recipients"] == 3 and dry["calls"][0]["path"] == "/api/v1/messages/bulk/"
    assert fake_prolific.messages == [] and not PlatformMessage.objects.exists()
    sent = platform_message(platform_study=ps, body="Thank you! Bonuses follow this week.", apply=True)
    assert sent["sent"] == 3 and len(fake_prolific.messages) == 1
    assert sorted(fake_prolific.messages[0]["ids"]) == sorted(Participant.objects.filter(study=study)
                                                              .values_list("external_id", flat=True))
    assert PlatformMessage.objects.get().state == CallState.SENT
    again = platform_message(platform_study=ps, body="Thank you! Bonuses follow this week.", apply=True)
    assert again["recipients"] == 0 and len(fake_prolific.messages) == 1


def test_a_message_to_one_participant_and_to_a_stranger(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    platform_sync(platform_study=ps)
    one = Participant.objects.filter(study=study).first().external_id
    platform_message(platform_study=ps, body="Please check your last answer.", to=[one], apply=True)
    assert fake_prolific.messages[0]["ids"] == [one]
    with pytest.raises(ApplicationError) as exc:
        platform_message(platform_study=ps, body="Hello", to=["f" * 24], apply=True)
    assert exc.value.status == 404 and len(fake_prolific.messages) == 1


def test_an_unknown_message_outcome_is_not_sent_again(prolific_account, fake_prolific) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    platform_sync(platform_study=ps)
    fake_prolific.fail("POST", r"/messages/bulk/", "timeout_after")
    sent = platform_message(platform_study=ps, body="Thanks.", apply=True)
    assert sent["unknown"] == 3 and PlatformMessage.objects.get().state == CallState.UNKNOWN
    again = platform_message(platform_study=ps, body="Thanks.", apply=True)
    assert again["recipients"] == 0 and len(fake_prolific.calls_to("POST", r"/messages/bulk/")) == 1


def test_blocking_someone_keeps_them_out_of_the_next_study(prolific_account, fake_prolific) -> None:
    study = paid_study()
    platform_publish(study=study, account=prolific_account)  # creates the account's block list (empty)
    prolific_account.refresh_from_db()
    group = fake_prolific.groups[prolific_account.block_list_id]
    assert group["members"] == []
    WorkerBlock.objects.create(platform="prolific", external_id="b" * 24, reason="copied sources")
    summary = block_list_sync(account=prolific_account)
    assert summary["added"] == 1 and group["members"] == ["b" * 24]
    WorkerBlock.objects.filter(external_id="b" * 24).delete()
    assert block_list_sync(account=prolific_account)["removed"] == 1 and group["members"] == []


def test_an_allow_list_of_accepted_writers_becomes_a_filter(prolific_account, fake_prolific) -> None:
    study = paid_study()
    writers = list(Participant.objects.filter(study=study).values_list("external_id", flat=True))
    follow_up = paid_study()
    platform_publish(study=follow_up, account=prolific_account,
                     allow_list={"accepted_writers_of": [study.slug], "min_accepted": 1})
    ps = PlatformStudy.objects.get(study=follow_up)
    body = fake_prolific.calls_to("POST", r"^/api/v1/studies/$")[0].body
    allow = next(flt for flt in body["filters"] if flt["filter_id"] == "participant_group_allowlist")
    assert allow["selected_values"] == [ps.allow_list_id]
    assert sorted(fake_prolific.groups[ps.allow_list_id]["members"]) == sorted(writers)


def test_an_empty_allow_list_is_refused_before_anything_is_created(prolific_account, fake_prolific) -> None:
    with pytest.raises(ApplicationError, match="holds nobody"):
        platform_publish(study=paid_study(), account=prolific_account, allow_list={"participants": []})
    assert fake_prolific.calls_to("POST", r"^/api/v1/studies/$") == [] and not PlatformStudy.objects.exists()


def test_blocking_in_the_review_queue_updates_the_platforms_block_list(prolific_account, fake_prolific,
                                                                        monkeypatch,
                                                                        django_capture_on_commit_callbacks) -> None:
    from django.contrib.auth.models import User

    from annotation.services.review import worker_block
    from platforms.celery_tasks import block_list_sync_task

    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    prolific_account.refresh_from_db()
    monkeypatch.setattr(block_list_sync_task, "delay", lambda pk: block_list_sync_task(pk))  # the worker's job
    worker = Participant.objects.filter(study=study).first().external_id
    with django_capture_on_commit_callbacks(execute=True):
        worker_block(platform="prolific", external_id=worker, reason="copied",
                     blocked_by=User.objects.create_user("reviewer"))
    assert fake_prolific.groups[prolific_account.block_list_id]["members"] == [worker]
