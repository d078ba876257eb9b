"""A job page in a real browser (headless Chromium): the one job poller (core/static/core/job_poll.js) shows, within
seconds and without a reload, that no worker has taken the job, naming its queue and the command that serves it;
the notice goes once a worker takes the job."""
from __future__ import annotations

from typing import Any

import pytest

from core.models import Job

# The browser fixtures (one Chromium per module, a context per test): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.scoring.agreement.test_dashboard_browser import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_the_job_page_says_within_seconds_that_no_worker_has_taken_the_job(page: Any, live_server: Any,
                                                                         settings: Any) -> None:
    settings.STYLECROWD_JOB_UNCLAIMED_SECONDS = 2
    log_in(page, live_server)
    job = Job.objects.create(kind="score_stel", queue="gpu", params={"queue": "gpu", "methods": ["st:minilm"]},
                             task_name="scoring.model_scoring.score_run", celery_task_id="d1e2f3-celery-id")
    page.goto(f"{live_server.url}/admin/core/job/{job.pk}/change/")
    assert page.locator("p.job-waiting").is_hidden()  # not yet: a worker usually takes a job at once
    assert "Score run (style-similarity methods) · job" in page.locator("h1").inner_text()
    page.wait_for_selector("p.job-waiting:not([hidden])", timeout=8000)
    notice = page.locator("p.job-waiting").inner_text()
    assert "No worker has taken this job" in notice and "“gpu” queue" in notice
    assert "celery -A config worker -Q gpu" in notice and "celery -A config worker -Q default,gpu" in notice
    assert "d1e2f3-celery-id" not in page.content()

    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, progress_done=1, progress_total=4)
    page.wait_for_selector("p.job-waiting[hidden]", state="attached", timeout=5000)
    assert page.locator("span.job-percent").inner_text() == "25% running"


def test_a_job_that_ends_needing_attention_is_shown_in_amber_with_the_ledger_link(page: Any, live_server: Any) -> None:
    """The poller takes "attention" as finished: the page reloads into the amber notice, whose link opens the
    ledger where the unknown outcome is resolved."""
    log_in(page, live_server)
    job = Job.objects.create(kind="platform_bonus", status=Job.Status.RUNNING, progress_total=2, progress_done=1,
                             params={"study": "s", "apply": True}, task_name="platforms.job")
    page.goto(f"{live_server.url}/admin/core/job/{job.pk}/change/")
    assert page.locator(".job-attention").count() == 0
    attention = {"reason": "3 bonus row(s) of study s have an unknown outcome.", "ledger": "bonuspayment",
                 "platform_study": 7}
    Job.objects.filter(pk=job.pk).update(status=Job.Status.ATTENTION,
                                         result={"dry_run": False, "attention": attention})
    page.wait_for_selector("p.job-attention", timeout=8000)  # reloaded by job_poll.js, not by the test
    notice = page.locator("p.job-attention")
    assert "3 bonus row(s) of study s have an unknown outcome." in notice.inner_text()
    assert notice.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 243, 205)"  # amber
    assert "needs attention" in page.content()
    notice.locator("a", has_text="Resolve in the bonus ledger").click()
    page.wait_for_url("**/admin/platforms/bonuspayment/?state__exact=unknown&platform_study__id__exact=7")
