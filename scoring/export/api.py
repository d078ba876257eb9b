"""REST door to benchmark exports: start one (a job), read it, download its file or card."""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.views import JobAcceptedSchema, job_accepted
from scoring.erasures import erasures_fields
from scoring.export.formats import FORMAT_CHOICES
from scoring.export.jobs import export_downloads, export_file, export_start
from scoring.export.selection import STATUSES
from scoring.models import BenchmarkExport
from tasks.models import Setup


class ExportInput(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMAT_CHOICES, default="stel-tsv",
                                     help_text="hub: a Hugging Face folder (README with YAML, Parquet per component "
                                               "and split, croissant.json), downloaded as a zip.")
    status = serializers.ChoiceField(choices=STATUSES, default="validated")
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=150,
                                 help_text="The benchmark's name (versions are counted per name); default: from the "
                                           "selection.")
    ids_only = serializers.BooleanField(default=False,
                                        help_text="Instance ids, labels and votes without the texts, with the recipe "
                                                  "to rebuild them: for corpora whose licence forbids copying text.")
    study = serializers.SlugField(required=False, allow_blank=True, default="")
    corpus = serializers.CharField(required=False, allow_blank=True, default="")
    component = serializers.CharField(required=False, allow_blank=True, default="")
    setup = serializers.ChoiceField(choices=Setup.choices, required=False, allow_blank=True, default="")
    salt = serializers.CharField(required=False, allow_blank=True, default="", max_length=200, write_only=True,
                                 trim_whitespace=False,
                                 help_text="Release salt for the annotators' pseudonyms in the per-annotator votes "
                                           "table: two releases join on annotators only if they share it. Never "
                                           "stored with the export (its params say `salted`); keep it to rebuild "
                                           "or re-export the same pseudonyms.")


class ExportSerializer(serializers.Serializer):
    """What `_export_body` answers (GET /api/v1/exports/ lists them)."""

    export = serializers.IntegerField()
    format = serializers.ChoiceField(choices=FORMAT_CHOICES)
    rows = serializers.IntegerField()
    sha256 = serializers.CharField()
    name = serializers.CharField()
    version = serializers.CharField(help_text="MAJOR.MINOR.PATCH.")
    changelog = serializers.DictField()
    ids_only = serializers.BooleanField()
    licences = serializers.ListField(child=serializers.CharField())
    files = serializers.ListField(child=serializers.JSONField())
    params = serializers.DictField()
    counts = serializers.DictField()
    study = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    downloads = serializers.DictField(child=serializers.URLField(), help_text="Download links by file (`data`, "
                                                                              "`card`, `card-md`, `croissant`).")
    erasures_since = serializers.IntegerField(help_text="Participants of its study erased on request since it was "
                                                        "made (its files still hold their votes).")
    erasures_note = serializers.CharField(help_text="\"Computed before n erasures …\", or empty.")


def _export_body(request: Request, export: BenchmarkExport) -> dict[str, Any]:
    return {
        "export": export.pk, "format": export.format, "rows": export.n_rows, "sha256": export.sha256,
        "name": export.name, "version": export.version, "changelog": export.changelog, "ids_only": export.ids_only,
        "licences": export.licences, "files": export.files,
        "params": export.params, "counts": export.counts, "study": export.study.slug if export.study else None,
        "created_at": export.created_at, **erasures_fields(export),
        "downloads": {which: request.build_absolute_uri(reverse("export-download", args=[export.pk, which]))
                      for which in export_downloads(export)},
    }


class ExportListView(APIView):
    permission_model = BenchmarkExport

    @extend_schema(operation_id="export_list", responses={200: ExportSerializer(many=True)}, tags=["exports"],
                   description="The latest 100 benchmark exports with their download links.")
    def get(self, request: Request) -> Response:
        exports = BenchmarkExport.objects.select_related("study")[:100]
        return Response([_export_body(request, export) for export in exports])

    @extend_schema(operation_id="export_start", request=ExportInput, responses={202: JobAcceptedSchema},
                   tags=["exports"], description="Queue an export (checked first: 400 when nothing matches); the "
                                                 "finished job's result names the export to download.")
    def post(self, request: Request) -> Response:
        serializer = ExportInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        d = serializer.validated_data
        job = export_start(fmt=d["format"], status=d["status"], study_slug=d["study"], corpus=d["corpus"],
                           component=d["component"], setup=d["setup"], name=d["name"], ids_only=d["ids_only"],
                           created_by=request.user.get_username(), salt=d["salt"])
        return job_accepted(job)


class ExportDetailView(APIView):
    permission_model = BenchmarkExport

    @extend_schema(operation_id="export_detail", responses={200: ExportSerializer}, tags=["exports"],
                   description="One export: counts, checksum, and its download links.")
    def get(self, request: Request, pk: int) -> Response:
        return Response(_export_body(request, get_object_or_404(BenchmarkExport.objects.select_related("study"),
                                                                pk=pk)))


class ExportDownloadView(APIView):
    permission_model = BenchmarkExport

    @extend_schema(operation_id="export_download", responses={(200, "application/octet-stream"): bytes},
                   tags=["exports"], description="The data file (`data`; a hub folder as `zip`), its dataset card "
                                                 "(`card`: JSON, `card-md`: Markdown) or its Croissant metadata "
                                                 "(`croissant`), streamed after the permission check.")
    def get(self, request: Request, pk: int, which: str) -> Any:
        return export_file(export=get_object_or_404(BenchmarkExport, pk=pk), which=which)
