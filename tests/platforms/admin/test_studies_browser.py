"""The publish page in a real browser (headless Chromium) against the fake Prolific: before the Publish button, the
study's cost from Prolific's calculator in currency, its eligible participants with the warning below the places,
and the test participant's run — a button, then its check on the page; axe finds nothing critical or serious."""
from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from platforms.models import PlatformStudy
from platforms.services.publish import platform_publish

# The browser fixtures (one Chromium per module, a context per test): imported, not a conftest.py.
from tests.annotation.accessibility import assert_accessible
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.platforms.conftest import paid_study
from tests.scoring.agreement.test_dashboard_browser import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_the_publish_page_shows_the_preflight_and_runs_a_test_participant(page: Any, live_server: Any,
                                                                          prolific_account: Any,
                                                                          fake_prolific: Any) -> None:
    study = paid_study()
    platform_publish(study=study, account=prolific_account)
    fake_prolific.eligible = 0
    log_in(page, live_server)
    page.goto(live_server.url + reverse("admin:platforms_platformstudy_publish", args=[study.pk]))
    cost = page.locator("strong.preflight-cost").inner_text()
    assert cost.startswith("£") and "in all" in cost and "of fees)" in cost
    assert "fewer than 25 eligible participants" in page.locator(".preflight-eligible").inner_text()
    assert "the study may never fill" in page.locator("p.preflight-warning").inner_text()
    assert_accessible(page, "the publish page with its pre-flight")

    page.fill("#id_test_email", "tester@example.org")
    page.click("input[value='Run with a Prolific test participant']")
    page.wait_for_selector("p.test-check")
    assert "Log in as the test participant" in page.locator("ul.messagelist").inner_text()
    assert "no submission with the study's completion code yet" in page.locator("p.test-check").inner_text()
    ps = PlatformStudy.objects.get(study=study)
    test_id = next(i for i in fake_prolific.studies if i != ps.external_id)
    fake_prolific.add_submission(test_id, fake_prolific.test_participants[0], study_code=study.completion_code)
    page.reload()
    assert "the completion code works" in page.locator("p.test-check").inner_text()
