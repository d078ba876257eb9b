"""Admin door to score runs (score_stel): a start form on an exported benchmark (any format with texts) or
server-side files, the job's progress bar, and the accuracy tables once a worker of the run's queue (`gpu` when a
method loads a model, else the default queue) has computed them."""
from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.errors import ApplicationError
from core.permissions import admin_permission_required
from scoring.admin.records import ComputationRecordAdmin
from scoring.model_scoring.methods import methods_parse
from scoring.model_scoring.runs import GPU_QUEUE, score_run_queue, score_run_start
from scoring.models import BenchmarkExport, ScoreRun

DEFAULT_METHODS = "char3gram,word_length,punctuation,uppercase,levenshtein,st:minilm"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class ScoreRunStartForm(forms.Form):
    export = forms.ModelChoiceField(
        queryset=BenchmarkExport.objects.filter(ids_only=False), required=False,
        help_text="An exported benchmark with its texts, in any format: STEL TSV, JSON lines, Parquet or a Hugging "
                  "Face folder (the validated set).",
    )
    benchmark_paths = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), required=False, label="Benchmark files",
        help_text="Or/and server-side benchmark paths (STEL TSV, .jsonl, .parquet or a hub export's folder), one per "
                  "line (the validated set).",
    )
    full_paths = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}), required=False, label="Full (unfiltered) set",
        help_text="Optional server-side paths of the unfiltered set (the same formats), reported beside the "
                  "validated one.",
    )
    methods = forms.CharField(initial=DEFAULT_METHODS, widget=forms.TextInput(attrs={"size": 80}), help_text=(
        "Comma-separated: char3gram, word_length, punctuation, uppercase, levenshtein, pos (needs NLTK tagger data, "
        "see docs/gpu-worker.md), hf:&lt;path&gt;, "
        "st:&lt;path&gt;, nsp:&lt;path&gt; (st:minilm / hf:minilm = the packaged all-MiniLM-L6-v2), or a dotted path "
        "to a SimilarityMethod subclass."))
    compare = forms.CharField(required=False, help_text="Two or more of the methods, for McNemar's test.")
    seed = forms.IntegerField(min_value=0, initial=0)
    device = forms.ChoiceField(choices=ScoreRun.Device.choices, initial=ScoreRun.Device.AUTO)

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "export_id": data["export"].pk if data["export"] else None,
            "benchmark_paths": _lines(data["benchmark_paths"]), "full_paths": _lines(data["full_paths"]),
            "methods": data["methods"], "compare": data["compare"] or None, "seed": data["seed"],
            "device": data["device"],
        }


def _number(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


@admin.register(ScoreRun)
class ScoreRunAdmin(ComputationRecordAdmin):
    list_display = ["id", "method_list", "benchmark", "status", "overall", "created_at"]
    list_select_related = ["job", "export"]
    # Benchmark files by name (an export by its link), never the server's folders.
    fields = ["benchmark", "full_set", "export", "methods", "compare", "seed", "device", "status",
              "results_table", "compare_table", "predictions", "created_by", "created_at", "computed_at"]
    readonly_fields = fields
    change_form_template = "admin/job_polling_change_form.html"

    start_form_class = ScoreRunStartForm
    start_title = "Score style-similarity methods on a benchmark"
    start_template = "admin/scoring/scorerun/start.html"

    def start_initial(self, request: HttpRequest) -> dict[str, Any] | None:
        return {name: request.GET[name] for name in ("export", "methods") if request.GET.get(name)} or None

    def start_context(self, form: Any) -> dict[str, Any]:
        """The queue the methods in the form go to (score_run_queue: `gpu` only when one loads a model)."""
        methods = form.data.get("methods") if form.is_bound else form.initial.get("methods", DEFAULT_METHODS)
        try:
            queue = score_run_queue(methods_parse(methods or ""))
        except ApplicationError:
            queue = ""
        return {"queue": queue, "gpu_queue": GPU_QUEUE, "default_queue": settings.CELERY_TASK_DEFAULT_QUEUE}

    def start_record(self, **kwargs: Any) -> ScoreRun:
        return score_run_start(**kwargs)

    def start_message(self, record: ScoreRun) -> str:
        return f"Score run #{record.pk} queued as job #{record.job_id} on the {record.job.params['queue']} queue."

    def get_urls(self) -> list:
        return [path("<int:pk>/predictions/", self.admin_site.admin_view(self.predictions_view),
                     name="scoring_scorerun_predictions"), *super().get_urls()]

    def predictions_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, ScoreRun, "view")
        from scoring.export.jobs import predictions_download  # heavy: pandas, pyarrow (not at set-up)

        run = get_object_or_404(ScoreRun, pk=pk)
        try:
            return predictions_download(run=run)
        except ApplicationError as exc:
            return HttpResponse(exc.message, status=exc.status, content_type="text/plain")

    @admin.display(description="predictions")
    def predictions(self, obj: ScoreRun) -> SafeString:
        if not obj.predictions_path:
            return format_html("–")
        return format_html('<a href="{}">download the predictions (TSV)</a>',
                           reverse("admin:scoring_scorerun_predictions", args=[obj.pk]))

    @admin.display(description="methods")
    def method_list(self, obj: ScoreRun) -> str:
        return ", ".join(obj.methods)

    @admin.display(description="benchmark")
    def benchmark(self, obj: ScoreRun) -> str:
        return f"export #{obj.export_id}" if obj.export_id else ", ".join(p.rsplit("/", 1)[-1] for p in
                                                                          obj.benchmark_paths)

    @admin.display(description="full set")
    def full_set(self, obj: ScoreRun) -> str:
        return ", ".join(p.rsplit("/", 1)[-1] for p in obj.full_paths or []) or "–"

    @admin.display(description="accuracy (validated)")
    def overall(self, obj: ScoreRun) -> str:
        methods = ((obj.results or {}).get("sets") or {}).get("validated", {}).get("methods") or {}
        return ", ".join(f"{spec} {table['overall']['accuracy']:.3f}" for spec, table in methods.items()) or "–"

    @admin.display(description="status")
    def status(self, obj: ScoreRun) -> SafeString:
        if obj.is_computed:
            return format_html("done")
        return self.job_status(obj)

    @admin.display(description="accuracy per component (share undecided), STEL Tables 3 and 7")
    def results_table(self, obj: ScoreRun) -> SafeString:
        sets = (obj.results or {}).get("sets") or {}
        if not sets:
            return format_html("–")
        seconds = (obj.results or {}).get("seconds") or {}
        parts = []
        for name, body in sets.items():
            components = sorted({c for table in body["methods"].values() for c in table["components"]})
            header = format_html_join("", "<th>{}</th>", ((c,) for c in components))
            rows = format_html_join("", "<tr><td>{}</td><td><b>{}</b> ({})</td>{}<td>{}</td></tr>", (
                (spec, _number(table["overall"]["accuracy"]), _number(table["overall"]["undecided_share"]),
                 format_html_join("", "<td>{} ({})</td>", (
                     (_number((table["components"].get(c) or {}).get("accuracy")),
                      _number((table["components"].get(c) or {}).get("undecided_share"))) for c in components)),
                 seconds.get(spec, "–"))
                for spec, table in body["methods"].items()))
            parts.append(format_html(
                '<h3>{} set: {} instances ({} quadruples)</h3><table class="score-results"><thead><tr>'
                "<th>method</th><th>overall</th>{}<th>seconds</th></tr></thead><tbody>{}</tbody></table>",
                name, body["instances"], body["quadruples"], header, rows))
        return SafeString("".join(parts))

    @admin.display(description="McNemar's test")
    def compare_table(self, obj: ScoreRun) -> SafeString:
        comparisons = (obj.results or {}).get("compare") or []
        if not comparisons:
            return format_html("–")
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", (
            (c["set"], " vs ".join(c["methods"]), c["table"], f"{c['pvalue']:.4g}", "exact" if c["exact"] else "χ²")
            for c in comparisons))
        return format_html('<table class="score-compare"><thead><tr><th>set</th><th>methods</th>'
                           "<th>[[both right, only first], [only second, neither]]</th><th>p</th><th>test</th></tr>"
                           "</thead><tbody>{}</tbody></table>", rows)
