"""The study's overview in Chromium, as a member of the researcher group (core/roles.py) on PostgreSQL: reached
from the study list and from a job the study started, its next-step button followed to agreement and back; and axe
(axe-core, through tests/annotation/accessibility.py) finds nothing critical or serious on any custom admin page:
the overview, the admin home, the agreement dashboard, the review queue, a job page, the platform pages (publish,
decisions, bonuses, messages, the ledger), the rendered dataset card, the study create form and preview, and the
start forms of agreement, exports and score runs."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User

from annotation.models import Study
from core.models import Job
from core.roles import roles_sync
from platforms.models import BonusPayment, PlatformAccount, PlatformStudy
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.celery_tasks.export import benchmark_export_task
from scoring.export.jobs import export_start
from scoring.models import BenchmarkExport
from tests import factories as f
from tests.annotation.accessibility import assert_accessible

# The browser fixtures (one Chromium per module, a context per test): imported, not a conftest.py.
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.annotation.helpers import run_participant
from tests.annotation.test_views_rewrite_browser import _study as rewrite_study
from tests.scoring.agreement.test_dashboard_browser import ensure_components
from tests.scoring.agreement.test_runs_worker import broker_db_emptied
from tests.scoring.export.test_services import _validated_study

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def researcher_logs_in(page: Any, live_server: Any, *, spend: bool = False) -> User:
    roles_sync()
    user = User.objects.create_user("researcher", "r@example.org", "pw-researcher-1", is_staff=True)
    user.groups.add(Group.objects.get(name="researcher"))
    if spend:  # given on its own to those who hold the budget (core/roles.py)
        user.user_permissions.add(Permission.objects.get(codename="spend_platformstudy"))
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-researcher-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    return user


def test_a_researcher_reaches_the_overview_and_follows_its_next_step(page: Any, live_server: Any, shots: Any,
                                                                     settings: Any) -> None:
    settings.STYLECROWD_OVERVIEW_REFRESH_SECONDS = 1
    ensure_components()
    broker_db_emptied()
    study, _ = _validated_study()  # answered and filtered; no agreement computed yet
    Study.objects.filter(pk=study.pk).update(status=Study.Status.ACTIVE)
    job = Job.objects.filter(kind="filter_instances").first() or Job.objects.create(
        kind="filter_instances", params={"study": study.slug}, status=Job.Status.DONE)
    researcher_logs_in(page, live_server)
    url = live_server.url
    # the admin home: the pipeline, then the studies in progress, each linking its overview
    assert page.locator("ol.sc-pipeline li").count() == 6
    assert page.locator(f"#studies-in-progress a[href='/admin/annotation/study/{study.pk}/overview/']").count() == 1
    shots(page, "home")

    # from the study list
    page.goto(f"{url}/admin/annotation/study/")
    page.click(f"a[href='/admin/annotation/study/{study.pk}/overview/']")
    page.wait_for_selector("#study-overview")
    assert page.locator("h1").inner_text() == f"Overview: {study.slug}"
    assert "answers stored" in page.locator("#overview-progress").inner_text()
    shots(page, "overview")
    # the figures stay live while the page is shown (annotation/static/annotation/overview.js)
    arrived = int(page.locator("#arrived").inner_text())
    f.ParticipantFactory(study=study, external_id="late-arrival")
    page.wait_for_function(f"document.getElementById('arrived').textContent.trim() === '{arrived + 1}'",
                           timeout=15_000)

    # from a job the study started: the job page names the study and links its overview
    page.goto(f"{url}/admin/core/job/{job.pk}/change/")
    page.click(f"a[href='/admin/annotation/study/{study.pk}/overview/']")
    page.wait_for_selector("#study-overview")

    # the next step is agreement (open-link study: publishing is optional, the platform steps wait for it)
    next_button = page.locator("a.next")
    assert next_button.count() == 1 and "Agreement" in next_button.inner_text()
    assert "Next: Agreement" in page.locator("#next-step").inner_text()
    next_button.click()
    page.wait_for_url(f"{url}/admin/scoring/agreementrun/start/?study={study.slug}")  # no run yet: the form
    assert page.input_value("#id_study") == study.slug
    page.fill("#id_resamples", "50")
    page.click("input[type=submit]")
    page.wait_for_url(f"{url}/admin/scoring/agreementrun/*/dashboard/")
    run_id = int(page.url.rstrip("/").split("/")[-2])
    agreement_run_compute(run_id=run_id)  # what the worker does
    page.reload()
    page.wait_for_selector("table.agr")

    # and back: the dashboard links the study's overview, where agreement is done and the export is next
    page.click("#study-overview-link")
    page.wait_for_selector("#study-overview")
    assert "✓" in page.locator("li[data-step=agreement]").inner_text()
    assert "Export the benchmark" in page.locator(".next").inner_text()
    assert not page.js_errors


def _world(tmp_path: Path, settings: Any) -> dict[str, Any]:
    """A study with agreement, a filter and an export (its dataset card), on the mock platform with a bonus owed and
    one of unknown outcome; and a rewrite study with rewrites to review."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    ensure_components()
    broker_db_emptied()
    study, _ = _validated_study()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.ACTIVE)
    run = agreement_run_compute(run_id=agreement_run_start(study=study, seed=1, resamples=50, enqueue=False).pk)
    job = export_start(fmt="stel-tsv", status="validated", study_slug=study.slug)
    benchmark_export_task(job.pk)  # what the worker runs
    account = PlatformAccount.objects.create(name="mock", platform="mock")
    ps = PlatformStudy.objects.create(study=study, account=account, platform="mock", currency="GBP",
                                      state=PlatformStudy.State.PUBLISHED, external_id="mock-1", places=4,
                                      reward_cents=150)
    for state, amount in ((BonusPayment.State.PENDING, "0.50"), (BonusPayment.State.UNKNOWN, "0.25")):
        BonusPayment.objects.create(platform_study=ps, worker_id=f"w-{state}", source="flat:x", amount=amount,
                                    currency="GBP", state=state)
    rewrite_study("a11y-rewrites")
    run_participant(slug="a11y-rewrites", pid="writer-1",
                    answer_for=lambda item, _: "Would you be available on Friday for the event?")
    return {"study": study, "run": run, "export_job": job, "export": BenchmarkExport.objects.get(),
            "platform_study": ps}


def test_axe_finds_nothing_critical_or_serious_on_the_custom_admin_pages(page: Any, live_server: Any,
                                                                       tmp_path: Path, settings: Any) -> None:
    world = _world(tmp_path, settings)
    study, ps = world["study"], world["platform_study"]
    researcher_logs_in(page, live_server, spend=True)
    pages = {
        "admin home": "/admin/",
        "study overview": f"/admin/annotation/study/{study.pk}/overview/",
        "study list": "/admin/annotation/study/",
        "study create form": "/admin/annotation/study/create/",
        "agreement dashboard": f"/admin/scoring/agreementrun/{world['run'].pk}/dashboard/",
        "review queue": "/admin/annotation/rewritereview/queue/",
        "export job page (dataset card)": f"/admin/core/job/{world['export_job'].pk}/change/",
        "export page (dataset card)": f"/admin/scoring/benchmarkexport/{world['export'].pk}/change/",
        "platform study page": f"/admin/platforms/platformstudy/{ps.pk}/change/",
        "publish": f"/admin/platforms/platformstudy/publish/{study.pk}/",
        "decisions": f"/admin/platforms/platformstudy/{ps.pk}/decide/",
        "bonuses": f"/admin/platforms/platformstudy/{ps.pk}/bonus/",
        "message": f"/admin/platforms/platformstudy/{ps.pk}/message/",
        "bonus ledger": f"/admin/platforms/bonuspayment/?platform_study__id__exact={ps.pk}",
        "study preview": f"/admin/annotation/study/{study.pk}/preview/",
        "agreement start form": f"/admin/scoring/agreementrun/start/?study={study.slug}",
        "export start form": f"/admin/scoring/benchmarkexport/start/?study={study.slug}",
        "score run start form": f"/admin/scoring/scorerun/start/?export={world['export'].pk}",
        "job list": "/admin/core/job/",
    }
    findings = {}
    for where, path in pages.items():
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.status == 200, (where, response and response.status)
        page.wait_for_load_state("networkidle")
        try:
            assert_accessible(page, where)
        except AssertionError as exc:
            findings[where] = str(exc)
    assert not findings, "\n\n".join(findings.values())
    assert not page.js_errors
