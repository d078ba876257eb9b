"""The same services through the API (202 jobs) and the admin (buttons, confirmation pages, the ledger)."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, Permission, User
from rest_framework.test import APIClient

from annotation.models import Participant
from core.errors import ApplicationError
from core.models import Job
from platforms.celery_tasks import platform_job_task
from platforms.models import BonusPayment, BulkBonus, Decision, PlatformStudy
from platforms.selectors import study_bonus_totals
from platforms.services.bonuses import platform_bonus
from tests.helpers import assert_api_error
from tests.platforms.conftest import failed_checks, on_prolific, paid_study

pytestmark = pytest.mark.django_db
PAY = r"/api/v1/bulk-bonus-payments/\w+/pay/"


def run(job_id: int) -> Job:
    try:
        platform_job_task(job_id)  # what the worker runs, called directly
    except ApplicationError:
        pass  # a refused job records its error on the row, as the worker's would
    return Job.objects.get(pk=job_id)


@pytest.fixture
def researcher(db):  # noqa: ANN001, ANN201
    """Staff with view/add/change of every platforms model, but not the permission to spend money."""
    user = User.objects.create_user("res", is_staff=True)
    group = Group.objects.create(name="researchers")
    group.permissions.add(*Permission.objects.filter(content_type__app_label__in=["platforms", "annotation"],
                                                     codename__regex=r"^(view|add|change)_"))
    user.groups.add(group)
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_publish_then_decide_then_pay_through_the_api(prolific_account, fake_prolific, api) -> None:
    study = paid_study()
    failed_checks(study, Participant.objects.filter(study=study).order_by("external_id")[1])
    response = api.post(f"/api/v1/studies/{study.slug}/platform/publish/",
                        {"account": "lab", "publish": True, "devices": ["desktop", "tablet"]}, format="json")
    assert response.status_code == 202 and response.json()["job"]["kind"] == "platform_publish"
    job = run(response.json()["job"]["id"])
    assert job.status == Job.Status.DONE, job.error
    assert job.result["state"] == "published"
    ps = PlatformStudy.objects.get(study=study)
    for p in Participant.objects.filter(study=study):
        fake_prolific.add_submission(ps.external_id, p.external_id)

    dry = run(api.post(f"/api/v1/studies/{study.slug}/platform/decisions/", {}, format="json").json()["job"]["id"])
    assert dry.result["dry_run"] and dry.result["reject"] == 1 and not Decision.objects.exists()
    refused = api.post(f"/api/v1/studies/{study.slug}/platform/decisions/", {"apply": True}, format="json")
    assert_api_error(refused, code="confirmation_required", status=400)
    assert not Decision.objects.exists()
    sent = run(api.post(f"/api/v1/studies/{study.slug}/platform/decisions/",
                        {"apply": True, "confirm_rejections": True}, format="json").json()["job"]["id"])
    assert sent.result["sent"] == 3
    listed = api.get(f"/api/v1/studies/{study.slug}/platform/decisions/").json()
    assert {d["kind"] for d in listed} == {"approve", "reject"} and all(d["state"] == "sent" for d in listed)

    paid = run(api.post(f"/api/v1/studies/{study.slug}/platform/bonuses/", {"apply": True, "flat": "0.50"},
                        format="json").json()["job"]["id"])
    assert paid.status == Job.Status.DONE and paid.result["rows_added"] == 2  # the two approved participants
    ledger = api.get(f"/api/v1/studies/{study.slug}/platform/bonuses/").json()
    assert [row["state"] for row in ledger] == ["paid", "paid"] and len(fake_prolific.calls_to("POST", PAY)) == 1
    totals = study_bonus_totals(study=study)
    assert totals["paid"] == Decimal("1.00") and totals["participants"] == 2 and totals["unknown"] == 0


def test_only_a_role_allowed_to_spend_can_apply(prolific_account, fake_prolific, researcher) -> None:
    study = paid_study()
    on_prolific(study, prolific_account, fake_prolific)
    for path, body in (("decisions", {"apply": True, "confirm_rejections": True}),
                       ("bonuses", {"apply": True, "flat": "1.00"}), ("messages", {"apply": True, "body": "Hi"})):
        response = researcher.post(f"/api/v1/studies/{study.slug}/platform/{path}/", body, format="json")
        assert_api_error(response, code="permission_denied", status=403)
        dry = researcher.post(f"/api/v1/studies/{study.slug}/platform/{path}/", {**body, "apply": False},
                              format="json")
        assert dry.status_code == 202
    assert not Job.objects.filter(params__apply=True).exists()


def test_bad_api_input_is_a_clear_400_and_queues_nothing(prolific_account, fake_prolific, api) -> None:
    study = paid_study()
    on_prolific(study, prolific_account, fake_prolific)
    jobs = Job.objects.count()
    assert_api_error(api.post(f"/api/v1/studies/{study.slug}/platform/bonuses/", {"flat": "-1"}, format="json"),
                     code="invalid", status=400)
    assert_api_error(api.post(f"/api/v1/studies/{study.slug}/platform/messages/", {"apply": True}, format="json"),
                     code="invalid", status=400)
    assert_api_error(api.post("/api/v1/studies/nope/platform/sync/", {}, format="json"), code="not_found",
                     status=404)
    other = paid_study()
    assert_api_error(api.post(f"/api/v1/studies/{other.slug}/platform/decisions/", {}, format="json"),
                     code="not_on_platform", status=409)
    assert Job.objects.count() == jobs


def test_the_admin_decide_page_shows_what_would_be_sent_and_sends_on_confirmation(
        prolific_account, fake_prolific, admin_client) -> None:
    study = paid_study()
    failed_checks(study, Participant.objects.filter(study=study).order_by("external_id")[0])
    ps = on_prolific(study, prolific_account, fake_prolific)
    from platforms.services.sync import platform_sync

    platform_sync(platform_study=ps)
    page = admin_client.get(f"/admin/platforms/platformstudy/{ps.pk}/decide/")
    html = page.content.decode()
    assert page.status_code == 200 and "/api/v1/submissions/bulk-approve/" in html and "REJECT" in html
    assert "I confirm the 1" in html and not Decision.objects.exists()
    response = admin_client.post(f"/admin/platforms/platformstudy/{ps.pk}/decide/", {"confirm_rejections": "on"})
    assert response.status_code == 302 and "/admin/core/job/" in response["Location"]
    job = run(Job.objects.latest("pk").pk)
    assert job.status == Job.Status.DONE and job.result["sent"] == 3


def test_the_admin_bonus_page_and_ledger(prolific_account, fake_prolific, admin_client) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    from platforms.services.sync import platform_sync

    platform_sync(platform_study=ps)
    page = admin_client.get(f"/admin/platforms/platformstudy/{ps.pk}/bonus/?flat=0.25&label=thanks")
    assert page.status_code == 200 and b"bonus-payments" in page.content and b"0.75" in page.content
    unconfirmed = admin_client.post(f"/admin/platforms/platformstudy/{ps.pk}/bonus/?flat=0.25",
                                    {"apply": "1", "flat": "0.25", "label": "thanks"})
    assert b"Tick the box" in unconfirmed.content and not BonusPayment.objects.exists()
    admin_client.post(f"/admin/platforms/platformstudy/{ps.pk}/bonus/?flat=0.25",
                      {"apply": "1", "flat": "0.25", "label": "thanks", "confirm": "on"})
    run(Job.objects.latest("pk").pk)
    assert BonusPayment.objects.filter(state="paid").count() == 3
    ledger = admin_client.get("/admin/platforms/bonuspayment/")
    assert ledger.status_code == 200 and b"Totals" in ledger.content and b"0.75" in ledger.content
    csv = admin_client.post("/admin/platforms/bonuspayment/", {
        "action": "export_csv", "_selected_action": [str(p.pk) for p in BonusPayment.objects.all()]})
    assert csv["Content-Type"].startswith("text/csv") and csv.content.count(b"\n") == 4


def test_unknown_rows_are_resolved_in_the_admin_with_what_to_check(prolific_account, fake_prolific,
                                                                   admin_client) -> None:
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "timeout_after")
    platform_bonus(platform_study=ps, flat="0.10", apply=True)
    bulk = BulkBonus.objects.get()
    page = admin_client.get("/admin/platforms/bonuspayment/?state__exact=unknown")
    assert f"bulk bonus {bulk.external_id}".encode() in page.content and b"Bonus payments" in page.content
    admin_client.post("/admin/platforms/bonuspayment/", {
        "action": "resolve_paid", "_selected_action": [str(p.pk) for p in BonusPayment.objects.all()]})
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {"paid"}
    assert BulkBonus.objects.get().state == BulkBonus.State.RESOLVED_PAID
    assert len(fake_prolific.calls_to("POST", PAY)) == 1


def test_the_study_page_links_to_its_platform_side(prolific_account, fake_prolific, admin_client) -> None:
    study = paid_study()
    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/")
    assert b"Run it on a platform" in page.content
    form = admin_client.get(f"/admin/platforms/platformstudy/publish/{study.pk}/")
    assert form.status_code == 200 and b"Create the draft" in form.content
    response = admin_client.post(f"/admin/platforms/platformstudy/publish/{study.pk}/",
                                 {"account": prolific_account.pk, "devices": ["desktop"]})
    assert response.status_code == 302
    job = run(Job.objects.latest("pk").pk)
    assert job.status == Job.Status.DONE and job.result["state"] == "draft", job.error
    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/")
    assert b"Open its platform page" in page.content and b"draft on the platform" in page.content


def test_the_preflight_and_the_test_run_through_the_api(prolific_account, fake_prolific, api) -> None:
    from platforms.services.publish import platform_publish
    from tests.platforms.conftest import paid_study

    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    fake_prolific.eligible = 1
    body = api.get(f"/api/v1/studies/{study.slug}/platform/preflight/").json()
    assert body["cost"]["currency"] == "GBP" and body["cost"]["total"] and body["eligible"]["count"] == 1
    assert body["warnings"][0].startswith("only 1 eligible participants")
    bad = api.post(f"/api/v1/studies/{study.slug}/platform/test-run/", {"email": "not-an-email"}, format="json")
    assert bad.status_code == 400 and not fake_prolific.test_participants
    run = api.post(f"/api/v1/studies/{study.slug}/platform/test-run/", {"email": "t@example.org"}, format="json")
    assert run.status_code == 201 and run.json()["study_url"].endswith(run.json()["test_study_id"])
    check = api.get(f"/api/v1/studies/{study.slug}/platform/test-run/?test_study_id={run.json()['test_study_id']}")
    assert check.status_code == 200 and check.json()["completion_code_works"] is False


def test_the_api_publish_jobs_draft_step_carries_the_preflight(prolific_account, fake_prolific, api) -> None:
    study = paid_study()
    queued = api.post(f"/api/v1/studies/{study.slug}/platform/publish/", {"account": "lab"}, format="json")
    assert queued.status_code == 202
    platform_job_task(queued.json()["job"]["id"])  # what the worker runs
    body = api.get(f"/api/v1/jobs/{queued.json()['job']['id']}/").json()
    assert body["status"] == "done" and body["result"]["state"] == "draft"
    preflight = body["result"]["preflight"]
    assert preflight["cost"]["currency"] == "GBP" and preflight["eligible"]["count"] == 5000
    assert fake_prolific.calls_to("POST", r"/api/v1/study-cost-calculator/")


@pytest.mark.parametrize(("body", "field"), [
    ({"allow_list": {"participants": ["5f0c\u00001"]}}, "allow_list.participants[0]"),
    ({"filters": [{"filter_id": "age", "selected_range": {"lower": "1\u00008"}}]}, "filters[0].selected_range.lower"),
])
def test_a_nul_in_the_publish_body_is_a_400_naming_the_field(prolific_account, fake_prolific, api, body,
                                                            field) -> None:
    """PostgreSQL's jsonb stores no NUL (a 500 from UntranslatableCharacter): refused before anything is stored."""
    study = paid_study()
    jobs = Job.objects.count()
    response = api.post(f"/api/v1/studies/{study.slug}/platform/publish/", {"account": "lab", **body}, format="json")
    error = assert_api_error(response, code="invalid", status=400)
    assert list(error["details"]) == [field] and "NUL" in error["message"]
    assert Job.objects.count() == jobs and not PlatformStudy.objects.filter(study=study).exists()


def test_a_nul_in_a_publish_file_is_refused_on_the_command_line(prolific_account, fake_prolific, tmp_path) -> None:
    from io import StringIO  # local: the one command-line test of this module

    from django.core.management import CommandError, call_command  # local: as above

    study = paid_study()
    filters = tmp_path / "filters.json"
    filters.write_text('[{"filter_id": "age", "selected_range": {"lower": "1\\u00008"}}]')
    allow = tmp_path / "allow.json"
    allow.write_text('{"participants": ["5f0c\\u00001"]}')
    for flag, path, where in (("--filters", filters, r"\[0\]\.selected_range\.lower"),
                              ("--allow-list", allow, r"participants\[0\]")):
        with pytest.raises(CommandError, match=rf"{path.name}: {where}: text must not hold a NUL"):
            call_command("platform_publish", "--study", study.slug, "--account", "lab", flag, str(path),
                         stdout=StringIO(), stderr=StringIO())
    assert not PlatformStudy.objects.filter(study=study).exists()
