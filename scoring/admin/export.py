"""Researchers' door to benchmark exports: the start form (a job writes the file), downloads by id after a
permission check, and a link to score an export."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotation.models import Study
from core.admin import job_panel_register
from core.errors import ApplicationError
from core.models import Job
from core.permissions import admin_permission_required
from scoring.admin.records import ComputationRecordAdmin, erasures_cell, job_message
from scoring.export.fields import STATUSES
from scoring.models import BenchmarkExport, BenchmarkPublication
from tasks.models import Corpus, Setup, StyleComponent


def export_job_panel(*, job: Any, user: Any) -> SafeString | None:
    """The export job's page shows the card and offers the files (the hub folder as a zip)."""
    from scoring.export.card.html import export_job_panel as panel  # heavy: pandas, pyarrow (not at set-up)

    return panel(job=job, user=user)


def format_choices() -> list[tuple[str, str]]:
    """The export formats' names and labels, from their registry (read when the form is drawn)."""
    from scoring.export.formats import FORMAT_CHOICES  # heavy: pandas, pyarrow (not at set-up)

    return FORMAT_CHOICES


job_panel_register("benchmark_export", export_job_panel)


class ExportStartForm(forms.Form):
    format = forms.ChoiceField(choices=format_choices,
                               help_text="Hugging Face folder: README with the hub's YAML, Parquet per component and "
                                         "split, Croissant; downloaded as a zip.")
    status = forms.ChoiceField(choices=[(s, s) for s in STATUSES], initial="validated",
                               help_text="validated: the instances the filter kept (the benchmark).")
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("slug"), to_field_name="slug", required=False,
                                   help_text="Only this study's instances (votes from its annotations).")
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.order_by("name"), to_field_name="name", required=False)
    component = forms.ModelChoiceField(queryset=StyleComponent.objects.order_by("name"), to_field_name="name",
                                       required=False)
    setup = forms.ChoiceField(choices=[("", "every setup"), *Setup.choices], required=False)
    name = forms.CharField(required=False, max_length=150,
                           help_text="The benchmark's name: each export of a name gets the next version and a "
                                     "changelog. Empty: from the selection.")
    ids_only = forms.BooleanField(required=False, label="Ids only",
                                  help_text="Without the texts, with the recipe to rebuild them (for corpora whose "
                                            "licence forbids redistribution, such as GYAFC).")
    salt = forms.CharField(required=False, max_length=200, strip=False, label="Release salt",
                           widget=forms.TextInput(attrs={"autocomplete": "off"}),
                           help_text="Re-keys the annotators' pseudonyms in the per-annotator votes table: two "
                                     "releases join on annotators only if they share it. Not stored with the export "
                                     "(it records only that one was used); keep it to rebuild the same pseudonyms.")

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {"fmt": d["format"], "status": d["status"], "study_slug": d["study"].slug if d["study"] else "",
                "corpus": d["corpus"].name if d["corpus"] else "",
                "component": d["component"].name if d["component"] else "", "setup": d["setup"],
                "name": d["name"], "ids_only": d["ids_only"], "salt": d["salt"]}


@admin.register(BenchmarkExport)
class BenchmarkExportAdmin(ComputationRecordAdmin):
    """Exports are written by a job started from the form; files are downloaded by id, after a permission check."""

    list_display = ["id", "name", "version", "format", "ids_only", "downloads", "n_rows", "study", "filter_run",
                     "created_at", "erasures", "score_link"]
    list_filter = ["format", "ids_only"]
    search_fields = ["name"]
    fields = ["name", "version", "format", "ids_only", "downloads", "changelog", "licences", "n_rows", "counts",
              "params", "files", "sha256", "study", "filter_run", "created_by", "created_at", "erasures", "card"]
    readonly_fields = fields
    start_form_class = ExportStartForm
    start_title = "Export a benchmark"
    start_template = "admin/scoring/benchmarkexport/start.html"

    def start_initial(self, request: HttpRequest) -> dict[str, Any] | None:
        return {key: request.GET[key] for key in ("study", "status", "format") if request.GET.get(key)} or None

    def start_record(self, **kwargs: Any) -> Job:
        from scoring.export.jobs import export_start  # heavy: pandas, pyarrow (not at set-up)

        return export_start(**kwargs)

    def start_message(self, record: Job) -> str:
        return job_message("Export queued as", record)

    def start_redirect_url(self, record: Job) -> str:
        return reverse("admin:core_job_change", args=[record.pk])

    def get_urls(self) -> list:
        return [path("<int:pk>/download/<str:which>/", self.admin_site.admin_view(self.download_view),
                     name="scoring_benchmarkexport_download"), *super().get_urls()]

    def download_view(self, request: HttpRequest, pk: int, which: str) -> HttpResponse:
        admin_permission_required(request, BenchmarkExport, "view")
        from scoring.export.jobs import export_file  # heavy: pandas, pyarrow (not at set-up)

        try:
            return export_file(export=get_object_or_404(BenchmarkExport, pk=pk), which=which)
        except ApplicationError as exc:
            return HttpResponse(exc.message, status=exc.status, content_type="text/plain")

    @admin.display(description="download")
    def downloads(self, obj: BenchmarkExport) -> str:
        from scoring.export.jobs import export_downloads  # heavy: pandas, pyarrow (not at set-up)

        labels = {"data": obj.get_format_display(), "zip": f"{obj.get_format_display()} (zip)",
                  "card": "dataset card (JSON)", "card-md": "dataset card (Markdown)",
                  "croissant": "Croissant (JSON-LD)"}
        return format_html_join(" · ", '<a href="{}" class="download-{}">{}</a>', (
            (reverse("admin:scoring_benchmarkexport_download", args=[obj.pk, which]), which, labels[which])
            for which in export_downloads(obj)))

    @admin.display(description="erasures since")
    def erasures(self, obj: BenchmarkExport) -> str:
        return erasures_cell(obj)

    @admin.display(description="dataset card")
    def card(self, obj: BenchmarkExport) -> str:
        from scoring.export.card.html import export_card_html  # heavy: pandas, pyarrow (not at set-up)

        return export_card_html(export=obj)

    @admin.display(description="score models")
    def score_link(self, obj: BenchmarkExport) -> str:
        # Added by the score_stel part: opens its start form with this export chosen (any export with its texts).
        if obj.ids_only:
            return "–"
        return format_html('<a href="{}?export={}">score this export</a>', reverse("admin:scoring_scorerun_start"),
                           obj.pk)


@admin.register(BenchmarkPublication)
class BenchmarkPublicationAdmin(admin.ModelAdmin):
    """Uploads to a dataset hub (publish_benchmark): a record of each, never edited here."""

    list_display = ["id", "repo", "export", "state", "commit_url", "created_by", "created_at"]
    list_filter = ["state", "hub"]
    readonly_fields = ["export", "hub", "repo", "endpoint", "private", "state", "commit_url", "commit_oid", "error",
                       "created_by", "created_at", "finished_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
