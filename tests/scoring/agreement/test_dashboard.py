"""The researcher dashboard in the admin: numbers, server-rendered plots, progress while computing, errors."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from core.models import Job
from scoring.agreement.dashboard import PLOTS, plot_render
from scoring.agreement.runs import agreement_run_compute, agreement_run_start
from scoring.models import AgreementRun
from tests.factories import annotated_study

pytestmark = pytest.mark.django_db


def computed_run() -> AgreementRun:
    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S2-S1"] * 3 + ["S1-S2"] * 2, ["S1-S2"] * 4 + ["S2-S1"]])
    annotated_study(answers=[["S2-S1"] * 4 + ["S1-S2"]], study=study, component_name="simplicity", start=86400 * 2)
    run = agreement_run_start(study=study, seed=1, resamples=100, enqueue=False)
    return agreement_run_compute(run_id=run.pk)


def test_dashboard_shows_numbers_and_plots(admin_client: Client) -> None:
    run = computed_run()
    response = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert f"{run.result['fleiss_kappa']:.3f}" in html and f"{run.result['krippendorff_alpha']:.3f}" in html
    assert "component: formality" in html and "component: simplicity" in html
    for name in PLOTS:
        if name == "models":  # no model annotated this study: the figure says why instead of drawing empty axes
            assert 'id="plot-models"' in html and 'id="annotate-with-model"' in html
            continue
        assert reverse("admin:scoring_agreement_plot", args=[run.pk, name, "svg"]) in html
    assert "<progress" not in html
    assert "manage.py" not in html and "compute agreement again" not in html.replace("no need to compute agreement "
                                                                                     "again", "")
    # the per-study entry point lands on the latest computed run
    response = admin_client.get(reverse("admin:scoring_agreement_study", args=[run.study.slug]))
    assert response.status_code == 302 and response.url.endswith(f"/{run.pk}/dashboard/")


@pytest.mark.slow  # about a second: out of `make test-fast`
def test_plots_render_as_svg_and_png(admin_client: Client) -> None:
    run = computed_run()
    for name in PLOTS:
        svg = admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, name, "svg"]))
        assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml"
        assert svg.content.lstrip().startswith(b"<?xml") and b"<svg" in svg.content
    png = admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, "votes", "png"]))
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, "nope", "svg"])).status_code == 404
    # identical data, identical SVG (no dates, fixed ids)
    assert plot_render(result=run.result, name="votes") == plot_render(result=run.result, name="votes")
    # the votes plot draws one bar group per component: the titles of both components appear
    votes_svg = plot_render(result=run.result, name="votes").decode()
    assert "formality" in votes_svg and "simplicity" in votes_svg
    timeline = run.result["timeline"]
    assert [row["valid"] for row in timeline] == [15, 5] and len(timeline) == 2


def test_running_job_shows_progress_bar_and_failed_job_its_error(admin_client: Client) -> None:
    study, _ = annotated_study(answers=[["S2-S1"] * 5])
    run = agreement_run_start(study=study, enqueue=False)
    Job.objects.filter(pk=run.job_id).update(status=Job.Status.RUNNING, progress_done=30, progress_total=120)
    html = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    assert '<progress id="agr-bar" class="job-progress" max="100" value="25.0">' in html
    assert f'data-job-poll="/api/v1/jobs/{run.job_id}/" data-job-status="running"' in html and "core/job_poll" in html
    assert reverse("job-detail", args=[run.job_id]) in html
    polled = admin_client.get(reverse("job-detail", args=[run.job_id])).json()
    assert polled["percent"] == 25.0 and polled["status"] == "running"
    Job.objects.filter(pk=run.job_id).update(status=Job.Status.FAILED, error="ValueError: the database went away")
    html = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    assert "The computation failed" in html and "ValueError: the database went away" in html


def test_start_form_queues_a_run_and_refuses_bad_levels(
    admin_client: Client, django_capture_on_commit_callbacks  # noqa: ANN001
) -> None:
    study, _ = annotated_study(answers=[["S2-S1"] * 5])
    url = reverse("admin:scoring_agreement_start")
    response = admin_client.post(url, {"study": study.slug, "level": "interval", "seed": 0, "resamples": 10})
    assert response.status_code == 200 and "nominal" in response.content.decode()
    assert not AgreementRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(url, {"study": study.slug, "level": "", "seed": 3, "resamples": 10})
    run = AgreementRun.objects.get()
    assert response.status_code == 302 and response.url.endswith(f"/{run.pk}/dashboard/")
    assert run.params["seed"] == 3 and run.job.status == Job.Status.CREATED and len(callbacks) == 1


def test_admin_lists_and_read_only_records(admin_client: Client) -> None:
    run = computed_run()
    assert admin_client.get(reverse("admin:scoring_agreementrun_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:scoring_filterrun_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:scoring_benchmarkexport_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:scoring_filterrun_add")).status_code == 403
    response = admin_client.get(reverse("admin:scoring_agreementrun_change", args=[run.pk]))
    assert response.status_code == 302


@pytest.mark.django_db
def test_plots_are_drawn_once_and_empty_ones_say_why(admin_client, tmp_path, settings, monkeypatch):
    """A computed run's plots are files (drawn at the end of the run, or on first view); a study without correct
    answers gets a sentence instead of an empty votes plot."""
    from scoring.agreement import dashboard
    from scoring.agreement.runs import agreement_run_compute, agreement_run_start
    from scoring.models import AgreementRun

    settings.MEDIA_ROOT = str(tmp_path)
    study, _ = annotated_study(answers=[["S2-S1"] * 5, ["S1-S2"] * 5])
    run = agreement_run_compute(run_id=agreement_run_start(study=study, resamples=20, enqueue=False).pk)
    dashboard.plots_prerender(run=run)
    drawn = []
    real = dashboard.plot_render
    monkeypatch.setattr(dashboard, "plot_render", lambda **kw: drawn.append(kw["name"]) or real(**kw))
    for _ in range(2):
        body = admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, "votes", "svg"]))
        assert body.status_code == 200 and b"<svg" in body.content
    assert drawn == []  # served from the file written when the run finished

    empty = AgreementRun.objects.create(study=study, params={"k": 5, "m": 3}, computed_at=run.computed_at,
                                        result={**run.result, "components": {}, "votes_distribution": {},
                                                "majority_accuracy": None, "participants": []})
    page = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[empty.pk])).content.decode()
    assert "No correct answers in this study" in page
    assert reverse("admin:scoring_agreement_plot", args=[empty.pk, "votes", "svg"]) not in page


def test_plots_are_cached_by_the_browser_and_revalidated(admin_client: Client) -> None:
    """Not `no-store`: the browser keeps a plot and asks whether it changed (304 without a body) on every view."""
    run = computed_run()
    url = reverse("admin:scoring_agreement_plot", args=[run.pk, "votes", "svg"])
    first = admin_client.get(url)
    assert first.status_code == 200 and first.content.lstrip().startswith(b"<?xml")
    assert "no-store" not in first["Cache-Control"] and "private" in first["Cache-Control"]
    assert first["ETag"].startswith('"') and first["Last-Modified"].endswith("GMT")
    again = admin_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == first["ETag"]
    since = admin_client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert since.status_code == 304
    other = admin_client.get(reverse("admin:scoring_agreement_plot", args=[run.pk, "votes", "png"]),
                             HTTP_IF_NONE_MATCH=first["ETag"])
    assert other.status_code == 200 and other["ETag"] != first["ETag"]  # another file, another tag
    # A recomputed run is another file: the old tag no longer matches.
    AgreementRun.objects.filter(pk=run.pk).update(computed_at=run.computed_at.replace(year=run.computed_at.year + 1))
    assert admin_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200
    # The permission check comes first: no 304 (nor a plot) for someone without it.
    admin_client.logout()
    assert admin_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 302  # to the login page


def test_the_download_link_of_a_hub_folder_export_downloads_its_zip(admin_client: Client, tmp_path) -> None:
    """A Hugging Face folder export has no single data file: the dashboard links its zip (not a 400)."""
    from scoring.export.services import benchmark_export

    run = computed_run()
    for fmt, out in (("hub", tmp_path / "hub"), ("jsonl", tmp_path / "rows.jsonl")):
        benchmark_export(fmt=fmt, out=out, study_slug=run.study.slug, status="all")
    html = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    links = re.findall(r'href="([^"]+/download/[^"]+)">download', html)
    assert len(links) == 2
    for link in links:
        response = admin_client.get(link)
        assert response.status_code == 200, (link, response.content[:200])
    hub_link = next(link for link in links if link.endswith("/zip/"))
    assert b"".join(admin_client.get(hub_link).streaming_content)[:2] == b"PK"  # a zip


def test_dashboard_shows_the_per_item_uncertainty(admin_client: Client, tmp_path, settings) -> None:
    """The run stores how likely each gold answer is right (model, histogram, expected wrong gold labels); the
    dashboard draws it and the items table carries p_correct."""
    import pandas as pd

    settings.MEDIA_ROOT = str(tmp_path)
    run = computed_run()
    facts = run.result["uncertainty"]
    assert facts["available"] and facts["model"] == "one-coin Dawid-Skene over annotators"
    assert sum(facts["histogram"]["counts"]) == facts["items"] == 4
    items = pd.read_parquet(run.items_path)
    assert items["p_correct"].notna().all()
    assert facts["expected_wrong_gold_labels"] == pytest.approx(float((1 - items["p_correct"]).sum()), abs=0.01)
    html = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    assert reverse("admin:scoring_agreement_plot", args=[run.pk, "uncertainty", "svg"]) in html
    svg = plot_render(result=run.result, name="uncertainty").decode()
    assert "wrong gold labels expected" in svg
