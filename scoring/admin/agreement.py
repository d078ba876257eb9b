"""Researchers' door to agreement: start a computation, watch its progress, read the per-study dashboard (numbers
and server-rendered plots), run the filter and the crowd-kit aggregation; filter runs, read-only."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.models import Study
from core.admin import job_kind_label, job_waiting_html
from core.errors import ApplicationError
from core.http_cache import revalidated_response
from core.models import Job
from core.permissions import admin_permission_required
from scoring.admin.records import ComputationRecordAdmin, erasures_cell, job_message
from scoring.agreement.dashboard import PLOTS, plot_cached, plot_empty_reason, plot_stamp
from scoring.erasures import erasures_fields
from scoring.models import AgreementRun, BenchmarkExport, FilterRun
from tasks.models import StyleComponent

LEVEL_CHOICES = [("", "the question's own"), ("nominal", "nominal"), ("ordinal", "ordinal"),
                 ("interval", "interval"), ("ratio", "ratio")]


class RatingsImportForm(forms.Form):
    """import_annotations --items/--wide in plain words: ratings of rewrites with their texts."""

    study = forms.SlugField(help_text="Slug of the imported study (created when missing; an earlier import's slug "
                                      "extends it).")
    scale = forms.CharField(initial="1-5", help_text="MIN-MAX of the ratings.")
    level = forms.ChoiceField(choices=LEVEL_CHOICES, required=False)
    ratings = forms.FileField(help_text="Long CSV (item, annotator, question, value), or a wide CSV (one row per "
                                        "rewrite, one column per rater per question: c-1, s-1, …).")
    items = forms.FileField(required=False, help_text="Items file (JSONL/CSV: id, source, rewrite[, reference, "
                                                      "system, target_style, dataset, language]) for a long file.")
    wide = forms.BooleanField(required=False, label="The ratings file is wide (Pauli et al.'s shape)")
    columns = forms.CharField(required=False, help_text="Wide file's columns, e.g. source=input,rewrite=output,"
                                                        "reference=reference,target_style=style_to,system=system "
                                                        "(the defaults).")
    raters = forms.CharField(required=False, help_text="Wide file's rater prefixes, e.g. c=content_preservation,"
                                                       "s=style_strength,f=fluency (the defaults).")
    rater_ids = forms.CharField(required=False, label="Rater id columns",
                                help_text="With a wide file only (refused without it): its columns holding each "
                                          "rater's own id: a prefix, e.g. "
                                          "prolificID (prolificID_1, prolificID_2, … name the raters of the rating "
                                          "columns ending in _1, _2, …), or the columns, e.g. WorkerId_1,WorkerId_2. "
                                          "Empty: raters are column positions. Ids leave the database as "
                                          "pseudonyms only.")
    question = forms.CharField(required=False, help_text="Question of rows without a question column.")
    dataset = forms.CharField(required=False, help_text="Dataset name of every item (where no column gives it).")
    language = forms.CharField(required=False, max_length=35, help_text="Language of the texts (BCP-47, e.g. en).")


def study_questions() -> dict[str, list[str]]:
    """Each study's question names (the Likert questions a run may be computed on), by slug."""
    return {slug: [str(q["name"]) for q in (questions or []) if isinstance(q, dict) and q.get("name")]
            for slug, questions in Study.objects.order_by("slug").values_list("slug", "questions")}


class AgreementStartForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("slug"), to_field_name="slug")
    question = forms.ChoiceField(required=False, help_text="Likert question, when the study has several.")
    level = forms.ChoiceField(choices=LEVEL_CHOICES, required=False)
    component = forms.ModelChoiceField(queryset=StyleComponent.objects.order_by("name"), to_field_name="name",
                                       required=False, help_text="Only items of this style component.")
    seed = forms.IntegerField(initial=0)
    resamples = forms.IntegerField(initial=1000, min_value=0, max_value=100_000, help_text="Bootstrap resamples.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The chosen study's questions only (the page's script keeps the list in step when another study is chosen).
        chosen = (self.data.get("study") if self.is_bound else self.initial.get("study")) or ""
        names = study_questions().get(str(chosen), [])
        self.fields["question"].choices = [("", "the study's only question" if len(names) < 2 else "—"),
                                           *((n, n) for n in names)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        study, question = data.get("study"), data.get("question")
        if study is not None and question:
            names = [q.get("name") for q in (study.questions or []) if isinstance(q, dict)]
            if question not in names:
                self.add_error("question", f"Study '{study.slug}' has no question '{question}' "
                                           f"(it has: {', '.join(map(str, names)) or 'none'}).")
        return data

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {"study": data["study"], "question": data["question"], "level": data["level"],
                "component": data["component"].name if data["component"] else "", "seed": data["seed"],
                "resamples": data["resamples"]}


class FilterForm(forms.Form):
    min_correct = forms.IntegerField(required=False, min_value=1, help_text="m of k (default: the study's).")
    balance = forms.BooleanField(required=False)
    seed = forms.IntegerField(required=False)


def _job_state(job: Job | None) -> dict[str, Any]:
    if job is None:
        return {"status": "done", "percent": 100.0, "error": ""}
    return {"status": job.status, "percent": job.percent, "error": job.error, "waiting": job_waiting_html(job)}


@admin.register(AgreementRun)
class AgreementRunAdmin(ComputationRecordAdmin):
    list_display = ["id", "study", "question", "level", "component", "state", "kappa", "alpha", "accuracy",
                    "created_at", "erasures", "dashboard_link"]
    list_filter = ["study"]
    change_list_template = "admin/scoring/agreement/change_list.html"

    @admin.display(description="state")
    def state(self, obj: AgreementRun) -> str:
        return "computed" if obj.is_computed else (obj.job.status if obj.job else "—")

    @admin.display(description="Fleiss' κ")
    def kappa(self, obj: AgreementRun) -> str:
        return _fmt(obj.result.get("fleiss_kappa"))

    @admin.display(description="Krippendorff's α")
    def alpha(self, obj: AgreementRun) -> str:
        return _fmt(obj.result.get("krippendorff_alpha"))

    @admin.display(description="majority accuracy")
    def accuracy(self, obj: AgreementRun) -> str:
        return _fmt(obj.result.get("majority_accuracy"))

    @admin.display(description="erasures since")
    def erasures(self, obj: AgreementRun) -> str:
        return erasures_cell(obj)

    @admin.display(description="dashboard")
    def dashboard_link(self, obj: AgreementRun) -> str:
        return format_html('<a href="{}">open</a>', reverse("admin:scoring_agreement_dashboard", args=[obj.pk]))

    start_form_class = AgreementStartForm
    start_title = "Compute agreement for a study"
    start_template = "admin/scoring/agreement/start.html"

    def start_url_name(self) -> str:
        return "scoring_agreement_start"

    def get_urls(self) -> list:
        view = self.admin_site.admin_view
        return [
            path("study/<slug:slug>/", view(self.study_view), name="scoring_agreement_study"),
            path("<int:run_id>/dashboard/", view(self.dashboard_view), name="scoring_agreement_dashboard"),
            path("<int:run_id>/plot/<str:name>.<str:fmt>", self.admin_site.admin_view(self.plot_view, cacheable=True),
                 name="scoring_agreement_plot"),  # cacheable: revalidated by its ETag, not no-store
            path("<int:run_id>/filter/", view(self.filter_view), name="scoring_agreement_filter"),
            path("<int:run_id>/aggregate/", view(self.aggregate_view), name="scoring_agreement_aggregate"),
            path("import/", view(self.import_view), name="scoring_agreement_import"),
            *super().get_urls(),
        ]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict | None = None) -> HttpResponse:
        admin_permission_required(request, AgreementRun, "view")
        return HttpResponseRedirect(reverse("admin:scoring_agreement_dashboard", args=[object_id]))

    def start_initial(self, request: HttpRequest) -> dict[str, Any] | None:
        return {"study": request.GET.get("study")} if request.GET.get("study") else None

    def start_context(self, form: Any) -> dict[str, Any]:
        return {"study_questions": study_questions()}

    def start_record(self, **kwargs: Any) -> AgreementRun:
        from scoring.agreement.runs import agreement_run_start  # heavy: pandas, scipy, krippendorff (not at set-up)

        return agreement_run_start(**kwargs)

    def start_redirect_url(self, record: AgreementRun) -> str:
        return reverse("admin:scoring_agreement_dashboard", args=[record.pk])

    def start_message(self, record: AgreementRun) -> str:
        return f"Agreement computation queued as job #{record.job_id}."

    def study_view(self, request: HttpRequest, slug: str) -> HttpResponse:
        """The per-study dashboard: the latest computed run, else the latest run, else the start form."""
        admin_permission_required(request, AgreementRun, "view")
        study = get_object_or_404(Study, slug=slug)
        runs = AgreementRun.objects.filter(study=study)
        run = runs.filter(computed_at__isnull=False).order_by("-computed_at").first() or runs.first()
        if run is None:
            return HttpResponseRedirect(reverse("admin:scoring_agreement_start") + f"?study={slug}")
        return HttpResponseRedirect(reverse("admin:scoring_agreement_dashboard", args=[run.pk]))

    def dashboard_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        admin_permission_required(request, AgreementRun, "view")
        # heavy: pandas, scipy, krippendorff (not at set-up)
        from scoring.agreement.runs import agreement_run_models_refresh
        from scoring.export.jobs import export_downloads

        run = get_object_or_404(AgreementRun.objects.select_related("study", "job"), pk=run_id)
        run = agreement_run_models_refresh(run=run)  # a model run finished since: shown without computing again
        result = run.result or {}
        groups = [("overall", result)] if result else []
        groups += [(f"component: {k}", v) for k, v in (result.get("components") or {}).items()]
        groups += [(f"setup: {k}", v) for k, v in (result.get("setups") or {}).items()]
        participants = sorted(result.get("participants", []), key=lambda p: (p["accuracy"] is None, p["accuracy"]))
        aggregation = Job.objects.filter(kind="crowd_aggregation", params__agreement_run=run.pk).first()
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "run": run, "result": result,
            "title": f"Agreement dashboard: {run.study.slug}", "groups": groups, "job": run.job,
            "job_state": _job_state(run.job), "erasures_note": erasures_fields(run)["erasures_note"],
            "plots": [(name, title, plot_empty_reason(result=result, name=name)) for name, (title, _) in PLOTS.items()],
            "participants": participants[:50], "n_participants": len(participants),
            "filter_runs": FilterRun.objects.filter(study=run.study)[:10], "filter_form": FilterForm(),
            # A hub folder downloads as its zip, a file as itself (export_downloads: the first of each kind's).
            "exports": [(e, export_downloads(e)[0]) for e in BenchmarkExport.objects.filter(study=run.study)[:10]],
            "aggregation": aggregation,
            "aggregation_state": _job_state(aggregation) if aggregation else None,
            # Filters and exports started from here come back here: the ones still queued or running, with links.
            "pending_jobs": [(job, job_kind_label(job.kind), _job_state(job)) for job in Job.objects.filter(
                kind__in=("filter_instances", "benchmark_export"), params__study=run.study.slug,
                status__in=(Job.Status.CREATED, Job.Status.RUNNING)).order_by("-created_at")[:10]],
        }
        return TemplateResponse(request, "admin/scoring/agreement/dashboard.html", context)

    def plot_view(self, request: HttpRequest, run_id: int, name: str, fmt: str) -> HttpResponse:
        admin_permission_required(request, AgreementRun, "view")
        run = get_object_or_404(AgreementRun, pk=run_id)
        if not run.is_computed:
            return HttpResponse("not computed yet", status=409, content_type="text/plain")
        try:
            return revalidated_response(
                request, key=f"agreement-run-{run.pk}-{plot_stamp(run=run, name=name)}-{name}.{fmt}",
                modified=run.computed_at, content_type="image/svg+xml" if fmt == "svg" else "image/png",
                render=lambda: plot_cached(run=run, name=name, fmt=fmt))
        except ApplicationError as exc:
            return HttpResponse(exc.message, status=exc.status, content_type="text/plain")

    def filter_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        admin_permission_required(request, FilterRun, "add")
        run = get_object_or_404(AgreementRun.objects.select_related("study"), pk=run_id)
        form = FilterForm(request.POST or None)
        target = reverse("admin:scoring_agreement_dashboard", args=[run.pk])
        if request.method != "POST" or not form.is_valid():
            messages.error(request, f"Filter not started: {form.errors.as_text() or 'use the form'}")
            return HttpResponseRedirect(target)
        from scoring.agreement.filtering import filter_run_start  # heavy: pandas, scipy, krippendorff (not at set-up)

        try:
            job = filter_run_start(study=run.study, **form.cleaned_data, created_by=request.user.get_username())
        except ApplicationError as exc:
            messages.error(request, f"Filter not started: {exc.message}")
            return HttpResponseRedirect(target)
        # Back to the dashboard, where the filter runs are listed: the message links the job's page.
        messages.info(request, job_message("Filter queued as", job))
        return HttpResponseRedirect(target)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload ratings with their texts; every bad line is shown and nothing is stored."""
        admin_permission_required(request, Study, "add")
        # heavy: pandas, krippendorff (not at set-up)
        from scoring.agreement.rating_imports import RatingsImport, WideMapping, ratings_import_upload

        form = RatingsImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            v = form.cleaned_data
            try:
                summary = ratings_import_upload(
                    request=RatingsImport(
                        study_slug=v["study"], scale=v["scale"], level=v["level"], ratings_path=Path("ratings"),
                        wide=WideMapping.of_options(wide=v["wide"], columns=v["columns"], raters=v["raters"],
                                                    rater_ids=v["rater_ids"]),
                        dataset=v["dataset"], language=v["language"], question=v["question"]),
                    ratings=v["ratings"], items=v["items"])
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"Imported {summary['responses']} ratings of {summary['items']} items "
                                          f"into study '{summary['study']}' (questions: "
                                          f"{', '.join(summary['questions'])}).")
                return HttpResponseRedirect(reverse("admin:scoring_agreement_start") + f"?study={summary['study']}")
        context = {**self.admin_site.each_context(request), "title": "Import ratings of rewrites", "form": form,
                   "opts": self.model._meta}
        return TemplateResponse(request, "admin/scoring/agreement/import.html", context)

    def aggregate_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        admin_permission_required(request, AgreementRun, "add")
        run = get_object_or_404(AgreementRun.objects.select_related("study"), pk=run_id)
        if request.method != "POST":
            return HttpResponseRedirect(reverse("admin:scoring_agreement_dashboard", args=[run.pk]))
        from scoring.agreement.aggregation import aggregation_start  # heavy: pandas, scipy (not at set-up)

        job = aggregation_start(run=run, created_by=request.user.get_username())
        messages.info(request, job_message("Dawid–Skene and MACE queued as", job))
        return HttpResponseRedirect(reverse("admin:scoring_agreement_dashboard", args=[run.pk]))


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


@admin.register(FilterRun)
class FilterRunAdmin(admin.ModelAdmin):
    """Filter runs are evidence: shown, never edited or deleted."""

    list_display = ["id", "study", "min_correct", "annotators_per_item", "balance", "seed", "n_validated",
                    "n_rejected", "n_balanced_away", "n_incomplete", "created_at", "erasures"]
    list_filter = ["study", "balance"]
    readonly_fields = [*(f.name for f in FilterRun._meta.fields), "erasures"]

    @admin.display(description="erasures since")
    def erasures(self, obj: FilterRun) -> str:
        return erasures_cell(obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
