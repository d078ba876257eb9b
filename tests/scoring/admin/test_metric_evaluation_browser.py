"""The admin's metric evaluation pages in a real browser (headless Debian Chromium via Playwright): start an
evaluation, watch its job until done — the page polls the job row and reloads itself — then read table and plot."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from scoring.celery_tasks.metric_evaluation import metric_evaluation_execute_task
from scoring.models import MetricEvaluation
from tests.scoring.metric_evaluation.test_services import _turk_study

# Playwright's sync API runs an event loop in this thread; the test's ORM calls between browser steps are plain
# synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_MS = 60_000  # the shared machine is often heavily loaded


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run `make browsers` first")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        yield page
        browser.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_start_watch_and_read_an_evaluation_in_the_browser(shared_data, live_server, admin_user, page,
                                                           artifacts_dir):
    _turk_study(shared_data, n=12, slug="browser-likert")
    page.goto(f"{live_server.url}/admin/login/?next=/admin/scoring/metricevaluation/start/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "password")
    page.click("input[type=submit]")

    page.select_option("#id_study", "browser-likert")
    page.fill("#id_question", "content")
    page.check("input[name=metrics][value=levenshtein]")
    page.check("input[name=metrics][value=chrf]")
    page.check("#id_by_style")
    page.click("input[type=submit][value='Start evaluation']")
    page.wait_for_url("**/admin/scoring/metricevaluation/*/change/")
    assert "queued as job" in page.inner_text("ul.messagelist")
    assert page.locator("progress.job-progress").count() == 1
    assert page.locator("table.metric-results").count() == 0

    evaluation = MetricEvaluation.objects.get(study__slug="browser-likert")
    metric_evaluation_execute_task(evaluation.job_id, evaluation.pk)  # what the worker runs

    # No manual reload: the page's poller sees the job done and reloads itself.
    page.wait_for_selector("table.metric-results")
    table = page.inner_text("table.metric-results").lower()  # the admin CSS upper-cases headers
    assert "levenshtein_src" in table and "chrf_ref" in table and "plain ρ" in table and "simple ρ" in table
    assert "1.000" in table
    assert page.inner_text("table.metric-systems").count("yes") >= 1
    width = page.eval_on_selector("img.metric-plot", "img => img.naturalWidth")
    assert width > 300  # a real, decoded PNG
    page.screenshot(path=str(artifacts_dir / "metric-evaluation-admin.png"), full_page=True)
