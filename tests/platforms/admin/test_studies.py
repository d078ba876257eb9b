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
