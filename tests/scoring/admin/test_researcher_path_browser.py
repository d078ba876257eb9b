"""The researcher's whole path in Chromium on PostgreSQL with a real Celery worker on Redis: upload an aligned corpus
(files named by role), generate quadruples, create a study in the admin, open it, let simulated participants fill
it over HTTP, compute agreement, run the 3-of-5 filter, export the validated STEL TSV from the browser and download
it; the download equals export_benchmark's output for the same selection. After opening, the researcher works from
the study's overview (issue 31): reached from the study list, its next-step buttons lead to agreement and to the
export, and it shows each step done."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import connection

from annotation.models import Study
from core.models import Job
from core.roles import roles_sync
from scoring.models import BenchmarkExport, FilterRun
from tasks.models import Corpus, TaskInstance
from tests.annotation.conftest_browser import *  # noqa: F403
from tests.scoring.agreement.test_dashboard_browser import ensure_components
from tests.scoring.agreement.test_runs_worker import broker_db_emptied, kill_group, start_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser,
              pytest.mark.worker, pytest.mark.slow]

REPO = Path(settings.BASE_DIR)
INFORMAL = REPO / "fixtures" / "corpora" / "formality_informal.txt"
FORMAL = REPO / "fixtures" / "corpora" / "formality_formal.txt"


def fill_study_over_http(*, base_url: str, slug: str, participants: int, accuracy: float) -> dict[str, Any]:
    """Simulated participants through the public JSON API (docs/annotator-api.md), in a process of their own.
    The one place this test drives participants: adapt it here if the participant flow changes."""
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{connection.settings_dict['NAME']}"}
    result = subprocess.run(
        [sys.executable, "manage.py", "simulate_annotators", "--study", slug, "--participants", str(participants),
         "--accuracy", str(accuracy), "--concurrency", "4", "--seed", "3", "--base-url", base_url],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    import json

    return json.loads(result.stdout.strip().splitlines()[-1])


def wait_for_job(kind: str, *, after: int = 0, timeout: float = 180, log: Path | None = None) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.filter(kind=kind, pk__gt=after).order_by("-pk").first()
        if job is not None and job.status in (Job.Status.DONE, Job.Status.FAILED):
            assert job.status == Job.Status.DONE, job.error
            return job
        time.sleep(0.3)
    raise AssertionError(f"no finished {kind} job\n{log.read_text()[-3000:] if log and log.exists() else ''}")


def test_the_researcher_path_in_the_browser(page: Any, live_server: Any, tmp_path: Path, settings, shots) -> None:  # noqa: ANN001
    settings.MEDIA_ROOT = str(tmp_path / "media")
    ensure_components()
    broker_db_emptied()
    worker = start_worker(tmp_path, "researcher-path")
    log = tmp_path / "researcher-path.log"
    url = live_server.url
    try:
        # A member of the researcher group `create_roles` makes (README, "Permissions and roles"), not a superuser.
        roles_sync()
        User.objects.create_user("researcher", "r@example.org", "pw-researcher-1", is_staff=True).groups.add(
            Group.objects.get(name="researcher"))
        page.goto(f"{url}/admin/login/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", "pw-researcher-1")
        page.click("input[type=submit]")
        page.wait_for_url(f"{url}/admin/")

        # 1. an aligned corpus: the two files by role
        page.goto(f"{url}/admin/tasks/corpus/import/")
        page.fill("#id_name", "formality-sample")
        page.select_option("#id_component", "formality")
        page.select_option("#id_import_format", "aligned")
        assert page.is_visible("#id_min_edit_distance") and page.is_visible("#id_style_1_file")  # the pair test
        assert page.is_hidden("#id_seed") and page.is_hidden("#id_files")  # turkcorpus only; other formats
        page.set_input_files("#id_style_1_file", str(INFORMAL))
        page.set_input_files("#id_style_2_file", str(FORMAL))
        shots(page, "import")
        with page.expect_navigation():  # to the job's page: a later goto must not race the redirect
            page.click("input[type=submit]")
        wait_for_job("corpus_import", log=log)
        corpus = Corpus.objects.get(name="formality-sample")
        assert corpus.n_pairs == 80

        # 2. quadruples, from the changelist action
        page.goto(f"{url}/admin/tasks/corpus/")
        page.check(f"input[name=_selected_action][value='{corpus.pk}']")
        page.select_option("select[name=action]", "generate_instances")
        page.click("button[name=index]")
        page.select_option("#id_setup", "quadruple")
        page.fill("#id_seed", "1")
        page.click("input[name=apply]")
        assert "job #" in page.inner_text("ul.messagelist")
        wait_for_job("instances_generate", log=log)
        assert TaskInstance.objects.filter(corpus=corpus, setup="quadruple").count() == 80

        # 3. a study, created in the admin as create_study does, previewed, then opened
        page.goto(f"{url}/admin/annotation/study/add/")
        page.click("#kind-quadruple")  # the kind first, then its own form
        page.fill("#id_slug", "browser-study")
        page.select_option("#id_corpora", "formality-sample")
        page.fill("#id_count", "10")
        page.fill("#id_seed", "1")
        page.fill("#id_items_per_batch", "5")
        page.fill("#id_screening_per_batch", "0")
        page.click("input[type=submit]")
        page.wait_for_selector("#open-study")
        assert "/s/browser-study/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in page.input_value("#link-prolific")
        shots(page, "preview")
        page.click("#open-study")
        page.wait_for_selector("ul.messagelist")
        study = Study.objects.get(slug="browser-study")
        assert study.status == Study.Status.ACTIVE and study.items.count() == 10

        # 4. the crowd, over HTTP
        summary = fill_study_over_http(base_url=url, slug=study.slug, participants=14, accuracy=0.9)
        assert summary["ok"] is True
        assert study.responses.filter(is_valid=True, study_item__isnull=False).count() >= 50

        # 5. agreement, from the study's overview (reached from the study list): its next step once people answered
        page.goto(f"{url}/admin/annotation/study/")
        page.click(f"a[href='/admin/annotation/study/{study.pk}/overview/']")
        page.wait_for_selector("#study-overview")
        assert "Agreement" in page.inner_text("#next-step")
        page.click("li[data-step='agreement'] .next")
        page.wait_for_url(f"{url}/admin/scoring/agreementrun/start/?study={study.slug}")
        page.fill("#id_resamples", "100")
        page.click("input[type=submit]")
        wait_for_job("agreement_compute", log=log)
        page.wait_for_selector("table.agr", timeout=60_000)  # the dashboard reloads itself when the job is done
        shots(page, "dashboard")

        # 6. the 3-of-5 filter from the dashboard
        page.fill("#id_min_correct", "3")
        with page.expect_navigation():
            page.click("form[action$='/filter/'] input[type=submit]")
        wait_for_job("filter_instances", log=log)
        assert FilterRun.objects.get(study=study).n_validated > 0

        # 7. export the validated STEL TSV from the overview's next step, and download it
        page.goto(f"{url}/admin/annotation/study/{study.pk}/overview/")
        assert "✓" in page.inner_text("li[data-step='agreement']") and "✓" in page.inner_text("li[data-step='filter']")
        assert "Export" in page.inner_text("#next-step")
        page.click("li[data-step='export'] .next")
        page.wait_for_selector("#id_status")
        assert page.input_value("#id_status") == "validated" and page.input_value("#id_format") == "stel-tsv"
        page.click("input[type=submit]")
        job = wait_for_job("benchmark_export", log=log)
        export = BenchmarkExport.objects.get(pk=job.result["export"])
        # the form leads to the job's page, which links to the export it made
        page.wait_for_url(f"**/admin/core/job/{job.pk}/change/")
        made = page.wait_for_selector(f"a[href$='/scoring/benchmarkexport/{export.pk}/change/']", timeout=60_000)
        assert f"/admin/core/job/{job.pk}/change/" in page.url
        made.click()
        with page.expect_download() as download_info:
            page.click("a.download-data")
        downloaded = tmp_path / "downloaded.tsv"
        download_info.value.save_as(str(downloaded))
        shots(page, "export")
        page.goto(f"{url}/admin/annotation/study/{study.pk}/overview/")  # the export is done; scoring comes next
        assert "✓" in page.inner_text("li[data-step='export']") and "Score" in page.inner_text("#next-step")
    finally:
        kill_group(worker)

    expected = tmp_path / "cli.tsv"
    call_command("export_benchmark", "--format", "stel-tsv", "--status", "validated", "--study", study.slug,
                 "--out", str(expected), stdout=io.StringIO())
    assert downloaded.read_bytes() == expected.read_bytes()
    assert downloaded.read_bytes().count(b"\n") == export.n_rows + 1
    assert page.js_errors == []
