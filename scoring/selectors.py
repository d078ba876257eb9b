"""Reads across scoring's parts: where a study stands in agreement, filtering, export and scoring, and its model
runs whose answers depend on the order of the options (the study's overview page). Four queries."""
from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from annotation.models import Study
from scoring.models import AgreementRun, BenchmarkExport, FilterRun, ModelRun, ScoreRun

# A model run that gives different answers across display orders on more than this share of its items, or picks
# the first option in more than `FIRST_OPTION_SHARE` of its answers: its answers depend on order (position bias).
ORDER_SENSITIVE_SHARE = 0.5
FIRST_OPTION_SHARE = 0.9


def study_scoring_overview(*, study: Study) -> dict[str, Any]:
    runs = list(AgreementRun.objects.filter(study=study).order_by("-computed_at", "-pk")
                .values_list("pk", "computed_at")[:20])
    computed = next((pk for pk, at in runs if at is not None), None)
    exports = list(BenchmarkExport.objects.filter(study=study).order_by("-pk").values_list("pk", flat=True)[:20])
    return {
        "agreement_run": computed or (runs[0][0] if runs else None), "agreement_computed": computed is not None,
        "filter_runs": FilterRun.objects.filter(study=study).count(),
        "export": exports[0] if exports else None,
        "score_runs": ScoreRun.objects.filter(export__in=exports).count() if exports else 0,
        "order_dependent_runs": order_dependent_runs(study=study),
    }


def order_dependent_runs(*, study: Study) -> list[dict[str, Any]]:
    """The study's computed model runs whose answers depend on the order of the options: label, the share of items
    answered differently across orders, and the share of answers that picked the first option shown (one query)."""
    runs = (ModelRun.objects.filter(study=study, computed_at__isnull=False)
            .annotate(answered=Count("answers", filter=~Q(answers__answer="")),
                      first=Count("answers", filter=~Q(answers__answer="") & Q(answers__option_index=0)))
            .values("pk", "label", "summary", "answered", "first"))
    found = []
    for run in runs:
        sensitive = (run["summary"] or {}).get("order_sensitive_share")
        first = run["first"] / run["answered"] if run["answered"] else None
        if (sensitive or 0) > ORDER_SENSITIVE_SHARE or (first or 0) > FIRST_OPTION_SHARE:
            found.append({"id": run["pk"], "label": run["label"], "order_sensitive_share": sensitive,
                          "first_option_share": first})
    return found



