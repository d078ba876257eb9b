"""The agreement dashboard in a real browser (headless Chromium): the progress bar follows the Job row through
polling, the page shows the numbers and the server-rendered plots once the run is computed, and a failure shows
its error without a reload."""
from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from core.jobs import job_running
from core.models import Job
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from tasks.models import StyleComponent

# The browser fixtures (one Chromium per module, a context per test): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.factories import annotated_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

COMPONENTS = {"formality": ("informal", "formal"), "simplicity": ("complex", "simple")}


def ensure_components() -> None:
    """A `--reuse-db` run after a transactional flush may lack the data migration's rows."""
    for name, (label_1, label_2) in COMPONENTS.items():
        StyleComponent.objects.get_or_create(name=name, defaults={"label_1": label_1, "label_2": label_2})


def log_in(page: Any, live_server: Any) -> None:
    User.objects.create_superuser("researcher", "r@example.org", "pw-researcher-1")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-researcher-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")


def test_progress_bar_polls_then_the_dashboard_shows_numbers_and_plots(page: Any, live_server: Any) -> None:
    ensure_components()
    log_in(page, live_server)
    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S2-S1"] * 3 + ["S1-S2"] * 2, ["S1-S2"] * 5])
    run = agreement_run_start(study=study, seed=1, resamples=100, enqueue=False)
    Job.objects.filter(pk=run.job_id).update(status=Job.Status.RUNNING, progress_done=10, progress_total=40)

    page.goto(f"{live_server.url}/admin/scoring/agreementrun/{run.pk}/dashboard/")
    assert page.evaluate("document.getElementById('agr-bar').value") == 25
    Job.objects.filter(pk=run.job_id).update(progress_done=30)
    page.wait_for_function("document.getElementById('agr-bar').value == 75")
    assert "75% running" in page.locator("#agr-percent").inner_text()

    # What the worker does; the page notices the job is done and reloads itself.
    with job_running(run.job_id):
        agreement_run_compute(run_id=run.pk)
    page.wait_for_selector("table.agr")
    run.refresh_from_db()
    assert f"{run.result['fleiss_kappa']:.3f}" in page.content()
    images = page.locator(".agr-grid img")
    assert images.count() == 5  # with the per-item uncertainty histogram
    page.wait_for_function(
        "[...document.querySelectorAll('.agr-grid img')].every(img => img.complete && img.naturalWidth > 0)")
    assert page.js_errors == []


def test_a_failed_computation_shows_its_error(page: Any, live_server: Any) -> None:
    ensure_components()
    log_in(page, live_server)
    study, _ = annotated_study(answers=[["S2-S1"] * 5])
    run = agreement_run_start(study=study, enqueue=False)
    Job.objects.filter(pk=run.job_id).update(status=Job.Status.RUNNING, progress_done=1, progress_total=10)
    page.goto(f"{live_server.url}/admin/scoring/agreementrun/{run.pk}/dashboard/")
    Job.objects.filter(pk=run.job_id).update(status=Job.Status.FAILED, error="MemoryError: out of memory in α")
    page.wait_for_function("document.getElementById('agr-error').textContent.includes('MemoryError')")
    assert page.js_errors == []


def test_the_start_forms_question_list_follows_the_chosen_study(page: Any, live_server: Any) -> None:
    """Before: every study's questions in one list, whichever study was chosen."""
    from tests.factories import StudyFactory

    def scale(name: str) -> dict[str, Any]:
        return {"name": name, "text": name, "min": 1, "max": 5}

    StudyFactory(slug="rate-a", item_kind="likert", questions=[scale("fluency"), scale("formality")])
    StudyFactory(slug="rate-b", item_kind="likert", questions=[scale("meaning"), scale("grammar")])
    StudyFactory(slug="order-c")
    log_in(page, live_server)
    page.goto(f"{live_server.url}/admin/scoring/agreementrun/start/?study=rate-b")

    def offered() -> list[str]:
        return page.eval_on_selector_all("#id_question option", "options => options.map(o => o.value)")

    assert offered() == ["", "meaning", "grammar"]  # server-rendered for the study in the link, in its order
    page.select_option("#id_study", "rate-a")
    assert offered() == ["", "fluency", "formality"]
    page.select_option("#id_question", "formality")
    page.select_option("#id_study", "order-c")
    assert offered() == [""] and page.input_value("#id_question") == ""
    assert page.inner_text("#id_question option") == "the study's only question"
    page.select_option("#id_study", "rate-b")
    assert offered() == ["", "meaning", "grammar"]
    assert page.js_errors == []
