"""Admin door to model annotators: a start form (a study, an OpenAI-compatible endpoint or a local model
directory), the run's progress bar with a stop button, its answers and counts, and "use as the study's guide"."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotation.models import Study
from core.errors import ApplicationError
from core.permissions import admin_permission_required, user_may
from scoring.admin.records import ComputationRecordAdmin
from scoring.models import ModelAnswer, ModelRun


class ModelRunStartForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("slug"), to_field_name="slug")
    backend = forms.ChoiceField(choices=ModelRun.Backend.choices, initial=ModelRun.Backend.OPENAI)
    base_url = forms.CharField(required=False, label="Base URL", widget=forms.TextInput(attrs={"size": 60}),
                               help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM) or "
                                         "http://127.0.0.1:8080/v1 (llama.cpp). The key, if any, is read from the "
                                         "worker's OPENAI_API_KEY.")
    model = forms.CharField(required=False, help_text="The model name the endpoint serves.")
    model_dir = forms.CharField(required=False, label="Model directory", widget=forms.TextInput(attrs={"size": 60}),
                                help_text="Local back-end: a causal LM saved with save_pretrained, inside the data "
                                          "folders (STYLECROWD_DATA_DIRS). Runs on the gpu queue.")
    label = forms.CharField(required=False, help_text="The annotator's name on the dashboard.")
    concurrency = forms.IntegerField(initial=4, min_value=1, max_value=64)
    timeout = forms.FloatField(initial=60, min_value=1, max_value=600, label="Time-out (seconds)")
    max_retries = forms.IntegerField(initial=3, min_value=0, max_value=10, label="Retries")
    backoff = forms.FloatField(initial=1.0, min_value=0, label="Back-off (seconds)")
    structured = forms.BooleanField(initial=True, required=False, label="Structured output (response_format)")
    max_tokens = forms.IntegerField(initial=64, min_value=1, max_value=4096)
    device = forms.ChoiceField(choices=[("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda")], initial="auto")
    price_input = forms.FloatField(initial=0, min_value=0, label="Price per 1,000 prompt tokens")
    price_output = forms.FloatField(initial=0, min_value=0, label="Price per 1,000 completion tokens")
    limit = forms.IntegerField(required=False, min_value=1, help_text="Only the first N items (a trial run).")

    def service_kwargs(self) -> dict[str, Any]:
        return dict(self.cleaned_data)


@admin.register(ModelRun)
class ModelRunAdmin(ComputationRecordAdmin):
    list_display = ["id", "label", "study", "backend", "status", "answered", "accuracy", "order_sensitive", "requests",
                    "cache_hits", "cost", "created_at"]
    list_filter = ["study", "backend"]
    list_select_related = ["job", "study"]
    fields = ["study", "label", "backend", "model", "base_url", "options", "status", "stop_button", "n_items",
              "n_asks", "n_answered", "n_no_answer", "requests", "cache_hits", "prompt_tokens", "completion_tokens",
              "cost", "warnings", "summary_table", "guide", "created_by", "created_at", "computed_at"]
    readonly_fields = fields
    change_form_template = "admin/scoring/modelrun/change_form.html"

    start_form_class = ModelRunStartForm
    start_title = "Annotate a study with a model"
    start_template = "admin/scoring/modelrun/start.html"

    def start_initial(self, request: HttpRequest) -> dict[str, Any] | None:
        return {"study": request.GET.get("study")} if request.GET.get("study") else None

    def start_record(self, **kwargs: Any) -> ModelRun:
        from scoring.model_annotators.runs import model_run_start  # heavy: pandas (not at set-up)

        return model_run_start(**kwargs)

    def start_message(self, record: ModelRun) -> str:
        queue = "gpu" if record.backend == "local" else "default"
        return f"Model run #{record.pk} queued as job #{record.job_id} on the {queue} queue."

    def get_urls(self) -> list:
        view = self.admin_site.admin_view
        return [path("<int:pk>/stop/", view(self.stop_view), name="scoring_modelrun_stop"),
                path("<int:pk>/guide/", view(self.guide_view), name="scoring_modelrun_guide"),
                *super().get_urls()]

    def stop_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, ModelRun, "change")
        from scoring.model_annotators.runs import model_run_stop  # heavy: pandas (not at set-up)

        run = get_object_or_404(ModelRun, pk=pk)
        target = reverse("admin:scoring_modelrun_change", args=[pk])
        if request.method != "POST":
            return HttpResponseRedirect(target)
        try:
            model_run_stop(run=run)
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.info(request, f"Model run #{pk}: stopping; no new question is sent, the answers in are kept.")
        return HttpResponseRedirect(target)

    def guide_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, ModelRun, "change")
        admin_permission_required(request, Study, "change")  # it changes how the study stops items
        from scoring.model_annotators.guidance import model_guidance_apply  # heavy: pandas (not at set-up)

        run = get_object_or_404(ModelRun.objects.select_related("study"), pk=pk)
        target = reverse("admin:scoring_modelrun_change", args=[pk])
        if request.method != "POST":
            return HttpResponseRedirect(target)
        raw = (request.POST.get("stop_after") or "").strip()
        try:
            stop_after = int(raw) if raw else None
            result = model_guidance_apply(run=run, stop_after=stop_after)
        except ValueError:
            messages.error(request, f"Stop after: {raw!r} is not a whole number.")
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.info(request, f"Study '{result['study']}' now stops an item after {result['stop_after']} human "
                                   f"answer(s) agreeing with {run.label} ({result['items_with_guide']} items have a "
                                   "guide answer).")
        return HttpResponseRedirect(target)

    @admin.display(description="status")
    def status(self, obj: ModelRun) -> SafeString:
        if obj.is_computed:
            return format_html("stopped" if obj.stopped else "done")
        return self.job_status(obj)

    @admin.display(description="stop")
    def stop_button(self, obj: ModelRun) -> SafeString:
        if obj.is_computed or obj.job is None or obj.job.status == obj.job.Status.FAILED:
            return format_html("–")
        if obj.stop_requested:
            return format_html("stop requested")
        # A form of its own (the read-only change form has no submit): posts to the stop view with the CSRF token.
        return format_html('<button type="submit" form="model-run-stop" formaction="{}" formmethod="post" '
                           'class="button" id="model-run-stop-button">Stop the run</button>',
                           reverse("admin:scoring_modelrun_stop", args=[obj.pk]))

    @admin.display(description="use as the study's guide")
    def guide(self, obj: ModelRun) -> SafeString:
        if not obj.is_computed:
            return format_html("–")
        note = format_html("current guide of the study's adaptive stopping") if obj.study.guide_source.startswith(
            f"model run #{obj.pk} ") else format_html("")
        return format_html('{} <button type="submit" form="model-run-guide" formaction="{}" formmethod="post" '
                           'class="button">Stop items early where this model agrees</button> (after <input '
                           'form="model-run-guide" name="stop_after" size="2" placeholder="m-1"> agreeing human '
                           "answers; adaptive studies only)", note,
                           reverse("admin:scoring_modelrun_guide", args=[obj.pk]))

    @admin.display(description="answered")
    def answered(self, obj: ModelRun) -> str:
        return f"{obj.n_answered} of {obj.n_asks}" if obj.n_asks else "–"

    @admin.display(description="accuracy")
    def accuracy(self, obj: ModelRun) -> str:
        value = (obj.summary or {}).get("accuracy")
        return "–" if value is None else f"{value:.3f}"

    @admin.display(description="order-sensitive")
    def order_sensitive(self, obj: ModelRun) -> str:
        from scoring.model_annotators.selectors import order_warnings  # heavy: pandas (not at set-up)

        value = (obj.summary or {}).get("order_sensitive_share")
        if value is None:
            return "–"
        return f"{value:.3f}" + (" (see its warnings)" if order_warnings(obj.summary or {}) else "")

    @admin.display(description="warnings")
    def warnings(self, obj: ModelRun) -> SafeString:
        """Position bias and order sensitivity in words, beside the figures they come from."""
        from scoring.model_annotators.selectors import order_warnings  # heavy: pandas (not at set-up)

        said = order_warnings(obj.summary or {})
        if not said:
            return format_html("–")
        return format_html('<ul class="errorlist model-warnings">{}</ul>',
                           format_html_join("", "<li>{}: {}</li>", ((obj.label, w) for w in said)))

    @admin.display(description="summary")
    def summary_table(self, obj: ModelRun) -> SafeString:
        summary = obj.summary or {}
        if not summary:
            return format_html("–")
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td></tr>", (
            (key.replace("_", " "), f"{value:.3f}" if isinstance(value, float) else value)
            for key, value in summary.items()))
        recent = ModelAnswer.objects.filter(run=obj).select_related("study_item")[:20]
        answers = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", (
            (a.study_item.external_id, a.question or "–", a.order, a.answer or "–", a.status) for a in recent))
        return format_html('<table>{}</table><h3>First answers</h3><table><tr><th>item</th><th>question</th>'
                           "<th>order</th><th>answer</th><th>status</th></tr>{}</table>", rows, answers)

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict | None = None) -> HttpResponse:
        extra = {**(extra_context or {}), "model_run_forms": user_may(request.user, ModelRun, "change")}
        return super().change_view(request, object_id, form_url, extra_context=extra)
