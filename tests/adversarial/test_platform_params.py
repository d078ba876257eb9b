"""A study that requires its platform's link parameters checks them (live server, real PostgreSQL)."""
from __future__ import annotations

import pytest

from annotation.models import Batch, Participant, Study
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from tests.adversarial.crowd import Browser, hex24
from tests.annotation.helpers import make_study, settings_pop
from tests.helpers import assert_api_error

STUDY_ID = "5f0c3e2a9b1d4c7e8f6a0b12"


def _open(live_server, slug: str, **link: str):
    return Browser(live_server.url, slug).open(**link)


@pytest.mark.django_db(transaction=True)
def test_prolific_study_checks_pid_study_id_and_session_id(live_server):
    study = make_study(slug="prolific-only", platform="prolific", prolific_study_id=STUDY_ID)
    good = {"participant": hex24(), "platform": "prolific", "study_ref": STUDY_ID, "session_ref": hex24()}
    refused = {
        "PROLIFIC_PID": [{**good, "participant": "{{%PROLIFIC_PID%}}"}, {**good, "participant": "PID-1"},
                         {**good, "participant": hex24()[:23]}],
        "STUDY_ID": [{**good, "study_ref": hex24()}, {**good, "study_ref": ""},
                     {**good, "study_ref": "{{%STUDY_ID%}}"}],
        "SESSION_ID": [{**good, "session_ref": ""}, {**good, "session_ref": "{{%SESSION_ID%}}"}],
        "platform": [{"platform": "anonymous"}, {**good, "platform": "mturk", "participant": "A1B2C3D4E5F6G7"}],
    }
    for field, links in refused.items():
        for link in links:
            error = assert_api_error(_open(live_server, study.slug, **link), code="invalid_link", status=400)
            assert field in error["details"] and field in error["message"], (link, error)
            assert "{{%" not in error["message"]  # never echoes the input back
    assert not Participant.objects.exists() and not Batch.objects.exists()  # nothing half-stored
    assert _open(live_server, study.slug, **good).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_mturk_study_checks_worker_hit_and_assignment_and_refuses_the_preview(live_server):
    study = make_study(slug="mturk-only", platform="mturk")
    good = {"participant": "A1B2C3D4E5F6G7", "platform": "mturk", "study_ref": "3XYZ" + "A" * 26,
            "session_ref": "3ABC" + "B" * 26}
    for field, link in [("assignmentId", {**good, "session_ref": "ASSIGNMENT_ID_NOT_AVAILABLE"}),
                        ("workerId", {**good, "participant": "${workerId}"}),
                        ("workerId", {**good, "participant": "worker one"}),
                        ("hitId", {**good, "study_ref": ""}),
                        ("assignmentId", {**good, "session_ref": ""})]:
        error = assert_api_error(_open(live_server, study.slug, **link), code="invalid_link", status=400)
        assert field in error["details"], (link, error)
    assert not Batch.objects.exists()
    browser = Browser(live_server.url, study.slug)
    assert browser.open(**good).status_code == 201
    browser.consent_and_start()
    browser.answer_all()
    # MTurk: a new assignment (a new HIT the worker accepted) may start a new batch from any browser; the same
    # assignment again, from a new browser, shows the code.
    again = Browser(live_server.url, study.slug).open(**good)
    assert again.status_code == 200 and again.json()["token"] is None and again.json()["completion_code"]
    assert Browser(live_server.url, study.slug).open(**{**good, "session_ref": "3DEF" + "C" * 26}).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_anonymous_entry_is_a_per_study_choice_and_placeholders_are_refused_everywhere(live_server):
    closed = make_study(slug="no-anon", allow_anonymous=False)
    assert_api_error(_open(live_server, closed.slug, platform="anonymous"), code="invalid_link", status=400)
    assert _open(live_server, closed.slug, participant="pid-1", platform="prolific").status_code == 201
    open_study = make_study(n_instances=6, slug="anon-ok")
    assert _open(live_server, open_study.slug, platform="anonymous").status_code == 201
    assert_api_error(_open(live_server, open_study.slug, participant="{{%PROLIFIC_PID%}}", platform="prolific"),
                 code="invalid_link", status=400)
    assert_api_error(_open(live_server, open_study.slug, participant="pid\x07", platform="prolific"),
                 code="invalid_link", status=400)


@pytest.mark.django_db
def test_platform_settings_are_checked_when_the_study_is_created():
    make_study(slug="base")  # instances to select from
    cases = [
        ({"platform": "prolific", "allow_anonymous": True}, "Allow anonymous", "allow_anonymous"),
        ({"platform": "any", "prolific_study_id": STUDY_ID}, "Prolific study id", "prolific_study_id"),
        ({"platform": "prolific", "prolific_study_id": "abc"}, "Prolific study id", "prolific_study_id"),
        ({"platform": "facebook"}, "Platform", "platform"),
        ({"first_answer_grace_seconds": 0}, "First-answer grace", "first_answer_grace_seconds"),
        ({"max_open_batches": 0}, "Max open batches", "max_open_batches"),
        ({"min_seconds_per_item": -1}, "Min seconds per item", "min_seconds_per_item"),
    ]
    for i, (kwargs, label, field) in enumerate(cases):
        with pytest.raises(ApplicationError, match=label) as refused:
            study_create(slug=f"bad-{i}", item_kind="quadruple", settings=settings_pop(kwargs, screening_per_batch=0))
        assert "--" not in refused.value.message and refused.value.details["field"] == field
    study = study_create(
        slug="mturk", item_kind="quadruple",
        settings=study_settings_build(screening_per_batch=0, platform="mturk"),
    )
    assert study.allow_anonymous is False  # off for platform studies


@pytest.mark.django_db
def test_create_study_cli_api_and_admin_expose_the_participation_settings(admin_client):
    import io
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    make_study(slug="base")  # instances to select from
    out = io.StringIO()
    call_command("create_study", "--slug", "paid", "--setup", "quadruple", "--screening-per-batch", "0",
                 "--platform", "prolific",
                 "--prolific-study-id", STUDY_ID.upper(), "--first-answer-grace", "90", "--max-open-batches", "50",
                 "--min-seconds-per-item", "1.5", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] and summary["platform"] == "prolific" and summary["allow_anonymous"] is False
    body = admin_client.get("/api/v1/studies/paid/").json()
    assert body["participation"] == {
        "platform": "prolific", "prolific_study_id": STUDY_ID, "allow_anonymous": False,
        "first_answer_grace_seconds": 90, "max_open_batches": 50, "min_seconds_per_item": 1.5,
    }
    default = admin_client.get("/api/v1/studies/base/").json()["participation"]
    assert default["platform"] == "any" and default["allow_anonymous"] is True
    assert default["first_answer_grace_seconds"] == 300  # settings.ANNOTATION_FIRST_ANSWER_GRACE_SECONDS
    created = admin_client.post("/api/v1/studies/", {"slug": "paid-api", "setup": "quadruple", "screening_per_batch": 0,
                                                     "platform": "mturk", "max_open_batches": 10}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["participation"]["platform"] == "mturk"
    assert created.json()["participation"]["allow_anonymous"] is False
    refused = admin_client.post("/api/v1/studies/", {"slug": "bad-api", "setup": "quadruple", "screening_per_batch": 0,
                                                     "platform": "mturk", "allow_anonymous": True}, format="json")
    error = refused.json()["error"]
    assert refused.status_code == 400 and error["message"].startswith("Allow anonymous cannot be used with platform")
    assert "--" not in error["message"] and error["details"]["field"] == "allow_anonymous"
    page = admin_client.get(f"/admin/annotation/study/{Study.objects.get(slug='paid').pk}/change/")
    assert page.status_code == 200 and b"Who may take part" in page.content and STUDY_ID.encode() in page.content
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "bad", "--setup", "quadruple", "--screening-per-batch", "0",
                     "--platform", "mturk", "--allow-anonymous", stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["error"]["message"].endswith("(--allow-anonymous)")
    assert not Study.objects.filter(slug="bad").exists()
