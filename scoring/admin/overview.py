"""Scoring's part of a study's overview page (annotation/admin/overview.py, which never imports scoring): the
agreement, filter, export and score steps, each the admin page that does it, and a warning for each model run whose
answers depend on the order of the options."""
from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from annotation.models import ORDERING_KINDS, Study
from annotation.overview import Notice, OverviewPart, Step, overview_section_register
from core.permissions import user_may
from scoring.models import AgreementRun, BenchmarkExport, FilterRun, ScoreRun
from scoring.selectors import study_scoring_overview


def _order_notice(run: dict[str, Any]) -> Notice:
    parts = []
    if run["first_option_share"] is not None:
        parts.append(f"picks the first option in {run['first_option_share']:.0%} of its answers")
    if run["order_sensitive_share"] is not None:
        parts.append(f"answers differently across display orders on {run['order_sensitive_share']:.0%} of items")
    return Notice(f"Model run “{run['label']}” {' and '.join(parts)}: its answers depend on the order of the options "
                  "(position bias), so its accuracy says little about the items.",
                  url=reverse("admin:scoring_modelrun_change", args=[run["id"]]), link="the model run")


def scoring_section(*, study: Study, user: Any) -> OverviewPart:
    facts = study_scoring_overview(study=study)
    ordering = study.item_kind in ORDERING_KINDS
    run = facts["agreement_run"]
    filter_url = reverse("admin:scoring_agreement_dashboard", args=[run]) + "#filter" if run else ""
    export_query = {"study": study.slug, **({"status": "validated"} if facts["filter_runs"] else {})}
    steps = [
        Step("agreement", "Agreement", reverse("admin:scoring_agreement_study", args=[study.slug]),
             done=facts["agreement_computed"], available=user_may(user, AgreementRun, "view")),
        Step("filter", "Filter (m of k)", filter_url, done=bool(facts["filter_runs"]),
             available=facts["agreement_computed"] and user_may(user, FilterRun, "add"), optional=not ordering,
             note="after agreement"),
        Step("export", "Export the benchmark",
             f"{reverse('admin:scoring_benchmarkexport_start')}?{urlencode(export_query)}",
             done=facts["export"] is not None, available=user_may(user, BenchmarkExport, "add")),
        Step("score", "Score models",
             f"{reverse('admin:scoring_scorerun_start')}?{urlencode({'export': facts['export'] or ''})}",
             done=bool(facts["score_runs"]), optional=not ordering,
             available=facts["export"] is not None and user_may(user, ScoreRun, "add"), note="after an export"),
    ]
    return OverviewPart(steps=steps, warnings=[_order_notice(r) for r in facts["order_dependent_runs"]])


overview_section_register("scoring", scoring_section)
