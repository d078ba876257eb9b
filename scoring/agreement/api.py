"""REST door to agreement runs and filter runs (model permissions, as in the admin)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from core.views import JobAcceptedSchema, job_accepted, job_accepted_schema, job_body
from scoring.agreement.filtering import filter_run_start, filter_run_summary
from scoring.agreement.rating_imports import RatingsImport, WideMapping, ratings_import_upload
from scoring.agreement.runs import agreement_run_start, agreement_run_summary
from scoring.agreement.selectors import study_get
from scoring.erasures import erasures_fields
from scoring.models import AgreementRun, FilterRun


class AgreementRunInput(serializers.Serializer):
    study = serializers.SlugField()
    question = serializers.CharField(required=False, allow_blank=True, default="")
    level = serializers.ChoiceField(choices=["", "nominal", "ordinal", "interval", "ratio"], required=False,
                                    default="")
    component = serializers.CharField(required=False, allow_blank=True, default="")
    k = serializers.IntegerField(required=False, min_value=1, allow_null=True, default=None)
    min_correct = serializers.IntegerField(required=False, min_value=1, allow_null=True, default=None)
    seed = serializers.IntegerField(required=False, default=0)
    resamples = serializers.IntegerField(required=False, min_value=0, max_value=100_000, default=1000)


class FilterRunInput(serializers.Serializer):
    study = serializers.SlugField()
    min_correct = serializers.IntegerField(required=False, min_value=1, allow_null=True, default=None)
    balance = serializers.BooleanField(required=False, default=False)
    balance_groups = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=1), required=False, allow_null=True,
        default=None, help_text='Balance only within each group of components, e.g. [["formality", "simplicity"]].')
    surplus = serializers.ChoiceField(choices=["first", "stel"], required=False, default="first",
                                      help_text="Items with more than k responses: the first k in time, or STEL's "
                                                "rule (surplus correct votes removed first).")
    seed = serializers.IntegerField(required=False, allow_null=True, default=None)


def _run_body(run: AgreementRun) -> dict[str, Any]:
    job = run.job
    body: dict[str, Any] = {
        "agreement_run": run.pk, "study": run.study.slug, "params": run.params, "computed": run.is_computed,
        "job": None if job is None else job_body(job), **erasures_fields(run),
    }
    if run.is_computed:
        body["result"] = agreement_run_summary(run)
    return body


class AgreementRunListView(APIView):
    permission_model = AgreementRun

    @extend_schema(operation_id="agreement_run_create", request=AgreementRunInput,
                   responses={202: job_accepted_schema("agreement run")})
    def post(self, request: Request) -> Response:
        """Queue an agreement computation on a Celery worker; poll the returned run (or its job)."""
        serializer = AgreementRunInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = agreement_run_start(
            study=study_get(slug=data["study"]), question=data["question"], level=data["level"],
            component=data["component"], k=data["k"], m=data["min_correct"], seed=data["seed"],
            resamples=data["resamples"], created_by=request.user.get_username(),
        )
        return job_accepted(run.job, **_run_body(run))


class AgreementRunDetailView(APIView):
    permission_model = AgreementRun

    @extend_schema(operation_id="agreement_run_detail", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, run_id: int) -> Response:
        """The run's parameters, its job's state and, once computed, its statistics."""
        run = get_object_or_404(AgreementRun.objects.select_related("study", "job"), pk=run_id)
        return Response(_run_body(run))


class FilterRunListView(APIView):
    permission_model = FilterRun

    @extend_schema(operation_id="filter_run_create", request=FilterRunInput, responses={202: JobAcceptedSchema})
    def post(self, request: Request) -> Response:
        """Queue filter_instances for a study; the job's result names the FilterRun it stored."""
        serializer = FilterRunInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = filter_run_start(study=study_get(slug=data["study"]), min_correct=data["min_correct"],
                               balance=data["balance"], balance_groups=data["balance_groups"],
                               surplus=data["surplus"], seed=data["seed"], created_by=request.user.get_username())
        return job_accepted(job)


class FilterRunDetailView(APIView):
    permission_model = FilterRun

    @extend_schema(operation_id="filter_run_detail", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, run_id: int) -> Response:
        """One filter run: the rule, counts before and after, and the statistics of the decided instances."""
        run = get_object_or_404(FilterRun.objects.select_related("study"), pk=run_id)
        return Response({**filter_run_summary(run), **erasures_fields(run)})


class AnnotationImportInput(serializers.Serializer):
    study = serializers.SlugField(help_text="Slug of the imported study (created when missing).")
    scale = serializers.CharField(help_text="MIN-MAX, e.g. 1-5.")
    level = serializers.ChoiceField(choices=["", "nominal", "ordinal", "interval", "ratio"], required=False,
                                    default="")
    ratings = serializers.FileField(help_text="Long CSV (item, annotator, question, value) or, with wide, one row "
                                              "per rewrite and one column per rater per question.")
    items = serializers.FileField(required=False, allow_null=True, default=None,
                                  help_text="Items file (JSONL/CSV: id, source, rewrite[, reference, system, "
                                            "target_style, dataset, language]).")
    wide = serializers.BooleanField(required=False, default=False)
    columns = serializers.CharField(required=False, allow_blank=True, default="",
                                    help_text="Wide file's column mapping, e.g. source=input,rewrite=output.")
    raters = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="Wide file's rater prefixes, e.g. c=content_preservation.")
    rater_ids = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="With wide only (refused without it): the wide file's columns "
                                                "holding each rater's own id: a prefix (e.g. prolificID: "
                                                "prolificID_1, prolificID_2, ... name the raters of the rating "
                                                "columns ending in _1, _2, ...) or the columns "
                                                "(WorkerId_1,WorkerId_2). Empty: raters are column positions.")
    question = serializers.CharField(required=False, allow_blank=True, default="")
    dataset = serializers.CharField(required=False, allow_blank=True, default="")
    language = serializers.CharField(required=False, allow_blank=True, default="", max_length=35)


class AnnotationImportView(APIView):
    """Ratings of rewrites with their texts, in as a Likert study (the door of `import_annotations --items/--wide`)."""

    permission_model = Study  # an import creates (or extends) a study
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(operation_id="annotation_imports_create", request=AnnotationImportInput,
                   responses={201: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        """Import the uploaded items and ratings (or one wide file); every bad line is named and nothing is stored."""
        # Plain fields by name, files by field (request.data holds the uploads and cannot be deep-copied).
        fields = {key: request.POST.get(key) for key in request.POST}
        serializer = AnnotationImportInput(data={**fields, "ratings": request.FILES.get("ratings"),
                                                 "items": request.FILES.get("items")})
        serializer.is_valid(raise_exception=True)
        v = serializer.validated_data
        wide = WideMapping.of_options(wide=v["wide"], columns=v["columns"], raters=v["raters"],
                                      rater_ids=v["rater_ids"])
        summary = ratings_import_upload(
            request=RatingsImport(study_slug=v["study"], scale=v["scale"], level=v["level"],
                                  ratings_path=Path(v["ratings"].name), wide=wide, dataset=v["dataset"],
                                  language=v["language"], question=v["question"]),
            ratings=v["ratings"], items=v["items"])
        return Response(summary, status=status.HTTP_201_CREATED)
