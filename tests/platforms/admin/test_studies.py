"""platforms.admin.studies: the study's platform pages answer a refusal in words, never a Server Error."""
from __future__ import annotations

import pytest
from django.urls import reverse

from core.models import Job
from platforms.models import Decision
from platforms.services.sync import platform_sync
from tests.platforms.services.test_decisions import TRANSITION, decided  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_sending_rejections_without_the_confirmation_box_is_said_on_the_page_not_a_500(
        decided, fake_prolific, admin_client) -> None:  # noqa: F811 - the fixture
    ps, _, _ = decided
    platform_sync(platform_study=ps)  # the page decides from the submissions as last synced
    url = reverse("admin:platforms_platformstudy_decide", args=[ps.pk])
    response = admin_client.post(url, {})  # the box left unticked
    assert response.status_code == 400
    page = response.content.decode()
    assert "rejection(s) would be sent: rejections need an explicit confirmation" in page
    assert 'class="errornote"' in page and 'name="confirm_rejections"' in page  # the form, again, with the box
    assert not Job.objects.exists() and not Decision.objects.exists() and not fake_prolific.calls_to("POST", TRANSITION)

    ticked = admin_client.post(url, {"confirm_rejections": "on"})
    job = Job.objects.get(kind="platform_decide")
    assert ticked.status_code == 302 and ticked.url == reverse("admin:core_job_change", args=[job.pk])


def test_the_publish_page_shows_the_cost_the_eligible_count_and_runs_a_test_participant(
        prolific_account, fake_prolific, admin_client) -> None:
    from platforms.models import PlatformStudy
    from platforms.services.publish import platform_publish
    from tests.platforms.conftest import paid_study

    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    url = reverse("admin:platforms_platformstudy_publish", args=[study.pk])
    fake_prolific.eligible = 0
    page = admin_client.get(url).content.decode()
    assert "hundredths of" not in page  # money in currency, not in pence
    assert '<strong class="preflight-cost">£' in page and " of fees)" in page
    assert "Prolific&#x27;s study cost calculator" in page
    assert "fewer than 25 eligible participants" in page and 'class="errornote preflight-warning"' in page
    assert fake_prolific.calls_to("POST", r"/api/v1/study-cost-calculator/")

    ran = admin_client.post(url, {"test_run": "1", "email": "tester@example.org"})
    ps = PlatformStudy.objects.get(study=study)
    test_id = next(i for i, s in fake_prolific.studies.items() if i != ps.external_id)
    assert ran.status_code == 302 and ran.url == f"{url}?test_study={test_id}"
    fake_prolific.add_submission(test_id, fake_prolific.test_participants[0], study_code=study.completion_code)
    checked = admin_client.get(ran.url).content.decode()
    assert "the completion code works" in checked and "AWAITING REVIEW" in checked
    assert ps.state == "draft" and fake_prolific.studies[ps.external_id]["status"] == "UNPUBLISHED"
