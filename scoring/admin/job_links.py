"""How a job's page (core/admin/jobs.py) names what a scoring job made and links the step that follows it:
an agreement computation → the filter on its dashboard; a filter → an export of its validated instances; an export
→ a score run on it. Registered on core's hooks (core imports no app)."""
from __future__ import annotations

from typing import Any

from django.db.models import Model
from django.urls import reverse

from core.admin import job_link_register, job_next_step_register
from core.models import Job
from scoring.models import AgreementRun, BenchmarkExport, FilterRun, MetricEvaluation, ScoreRun


def _named(model: type[Model], url_name: str) -> Any:
    def link(pk: object) -> tuple[str, str] | None:
        record = model.objects.filter(pk=int(str(pk))).first()
        return None if record is None else (reverse(url_name, args=[record.pk]), str(record))
    return link


job_link_register("agreement_run", _named(AgreementRun, "admin:scoring_agreement_dashboard"))
job_link_register("filter_run", _named(FilterRun, "admin:scoring_filterrun_change"))
job_link_register("export", _named(BenchmarkExport, "admin:scoring_benchmarkexport_change"))
job_link_register("score_run", _named(ScoreRun, "admin:scoring_scorerun_change"))
job_link_register("evaluation", _named(MetricEvaluation, "admin:scoring_metricevaluation_change"))


def _after_agreement(job: Job) -> tuple[str, str] | None:
    run = job.result.get("agreement_run") or job.params.get("agreement_run")
    if not run:
        return None
    return (reverse("admin:scoring_agreement_dashboard", args=[int(run)]) + "#filter",
            "Next: filter the instances (m of k), on the agreement dashboard")


def _after_filter(job: Job) -> tuple[str, str] | None:
    study = job.result.get("study") or job.params.get("study")
    if not study:
        return None
    return (reverse("admin:scoring_benchmarkexport_start") + f"?study={study}&status=validated",
            "Next: export the validated instances")


def _after_export(job: Job) -> tuple[str, str] | None:
    export = job.result.get("export")
    if not export:
        return None
    return (reverse("admin:scoring_scorerun_start") + f"?export={int(export)}",
            "Next: score style-similarity methods on this export")


job_next_step_register("agreement_compute", _after_agreement)
job_next_step_register("filter_instances", _after_filter)
job_next_step_register("benchmark_export", _after_export)
