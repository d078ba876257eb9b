"""Admin door to metric meta-evaluations: a start form, the job's progress, a results table and a plot."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from scoring.admin.records import ComputationRecordAdmin
from scoring.metric_evaluation.forms import MetricEvaluationForm
from scoring.metric_evaluation.plots import evaluation_plot_caption
from scoring.metric_evaluation.services import metric_evaluation_start
from scoring.models import MetricEvaluation


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}g}" if abs(value) < 1e-3 and value != 0 else f"{value:.{digits}f}"


@admin.register(MetricEvaluation)
class MetricEvaluationAdmin(ComputationRecordAdmin):
    list_display = ["id", "study", "question", "metric_list", "by_style", "status", "created_at"]
    list_filter = ["study", "question"]
    list_select_related = ["study", "job"]
    fields = ["study", "question", "metrics", "by_style", "status", "results_table", "system_table", "plot",
              "params", "created_by", "created_at", "computed_at"]
    readonly_fields = fields
    change_form_template = "admin/scoring/metricevaluation/change_form.html"

    start_form_class = MetricEvaluationForm
    start_title = "Evaluate metrics against human ratings"
    start_template = "admin/scoring/metricevaluation/start.html"

    def start_record(self, **kwargs: Any) -> MetricEvaluation:
        return metric_evaluation_start(**kwargs)

    def start_message(self, record: MetricEvaluation) -> str:
        queue = record.job.params.get("queue")
        return f"Metric evaluation #{record.pk} queued as job #{record.job_id} (queue {queue})."

    @admin.display(description="metrics")
    def metric_list(self, obj: MetricEvaluation) -> str:
        return ", ".join(obj.metrics)

    @admin.display(description="status")
    def status(self, obj: MetricEvaluation) -> SafeString:
        if obj.is_computed:
            return format_html("done ({} items)", (obj.results or {}).get("n_items"))
        return self.job_status(obj)

    @admin.display(description="Spearman with the mean human rating")
    def results_table(self, obj: MetricEvaluation) -> SafeString:
        columns = (obj.results or {}).get("columns") or {}
        if not columns:
            return format_html("–")
        # Per target style or per dataset, whichever the evaluation was asked for.
        key = next((k for k in ("by_style", "by_dataset") if any(k in e for e in columns.values())), "by_style")
        styles = sorted({s for entry in columns.values() for s in entry.get(key) or {}})
        header = format_html_join("", "<th>{} ρ (p, n)</th>", ((s,) for s in styles))
        rows = []
        for column, entry in columns.items():
            overall = entry["overall"]
            groups = entry.get(key) or {}
            cells = format_html_join("", "<td>{} ({}, {})</td>", (
                (_number((groups.get(s) or {}).get("rho")), _number((groups.get(s) or {}).get("p")),
                 (groups.get(s) or {}).get("n", 0))
                for s in styles))
            rows.append(format_html("<tr><td>{}</td><td><b>{}</b></td><td>{}</td><td>{}</td>{}<td>{}</td></tr>",
                                    column, _number(overall.get("rho")), _number(overall.get("p")), overall.get("n"),
                                    cells, _number((obj.results.get("timings") or {}).get(entry["metric"]), 2)))
        return format_html('<table class="metric-results"><thead><tr><th>metric</th><th>ρ overall</th><th>p</th>'
                           "<th>n</th>{}<th>seconds</th></tr></thead><tbody>{}</tbody></table>",
                           header, SafeString("".join(rows)))

    @admin.display(description="system level (Babakov et al. 2022, Table 4)")
    def system_table(self, obj: MetricEvaluation) -> SafeString:
        columns = (obj.results or {}).get("columns") or {}
        rows = [(column, _number(e["system"].get("rho")), ", ".join(e["system"]["human_best"]),
                 ", ".join(e["system"]["metric_best"]), "yes" if e["system"]["picks_best"] else "no")
                for column, e in columns.items() if (e.get("system") or {}).get("human_best")]
        if not rows:
            return format_html("– (items carry no system labels)")
        return format_html('<table class="metric-systems"><thead><tr><th>metric</th><th>ρ over systems</th>'
                           "<th>human-best</th><th>metric-best</th><th>picks best</th></tr></thead><tbody>{}"
                           "</tbody></table>",
                           format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                                            rows))

    @admin.display(description="plot")
    def plot(self, obj: MetricEvaluation) -> SafeString:
        if not obj.is_computed or not (obj.results or {}).get("columns"):
            return format_html("–")
        # A file drawn once per evaluation (scoring/metric_evaluation/plots.py), not a PNG inlined and redrawn per view.
        return format_html('<figure><img class="metric-plot" alt="Spearman correlations and scatter plots" '
                           'src="{}" style="max-width:100%"><figcaption class="metric-plot-caption">{}'
                           "</figcaption></figure>", reverse("metric-evaluation-plot", args=[obj.pk]),
                           evaluation_plot_caption(obj.results))
