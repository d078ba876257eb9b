"""REST door to score runs (admin users): start one on an export or server-side TSVs, read its results."""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.views import job_accepted, job_accepted_schema, job_body
from scoring.export.jobs import predictions_download
from scoring.models import ScoreRun

from .methods import MODEL_METHODS, SIMPLE_METHODS
from .runs import score_run_start, score_run_summary


class ScoreRunInput(serializers.Serializer):
    export = serializers.IntegerField(required=False, allow_null=True, help_text=(
        "A BenchmarkExport id (any format with its texts: STEL TSV, JSONL, Parquet, hub folder)."))
    benchmark_paths = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    full_paths = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    methods = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    compare = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    seed = serializers.IntegerField(min_value=0, default=0)
    device = serializers.ChoiceField(choices=["auto", "cpu", "cuda"], default="auto")


def _runs() -> Any:
    return ScoreRun.objects.select_related("job")


def _body(run: Any, *, full: bool) -> dict[str, Any]:
    body = {**score_run_summary(run), "job": job_body(run.job) if run.job else None}
    if full:
        body["results"] = run.results
    return body


class ScoreRunListView(APIView):
    permission_model = ScoreRun

    @extend_schema(operation_id="score_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        """The method names available and the latest 100 score runs."""
        return Response({"methods": [*SIMPLE_METHODS, *(f"{p}:<model path>" for p in MODEL_METHODS)],
                         "runs": [_body(run, full=False) for run in _runs()[:100]]})

    @extend_schema(operation_id="score_runs_start", request=ScoreRunInput,
                   responses={202: job_accepted_schema("score run")})
    def post(self, request: Request) -> Response:
        """Validate and queue a score run (on the `gpu` queue when a method loads a model, else the default
        queue); poll the returned job."""
        serializer = ScoreRunInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = score_run_start(
            export_id=data.get("export"), benchmark_paths=data["benchmark_paths"], full_paths=data["full_paths"],
            methods=data["methods"], compare=data["compare"] or None, seed=data["seed"], device=data["device"],
            created_by=request.user.get_username(),
        )
        return job_accepted(run.job, **_body(run, full=False))


class ScoreRunDetailView(APIView):
    permission_model = ScoreRun

    @extend_schema(operation_id="score_run_detail", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        """One score run with its accuracy tables and McNemar comparisons."""
        return Response(_body(get_object_or_404(_runs(), pk=pk), full=True))


class ScoreRunPredictionsView(APIView):
    permission_model = ScoreRun

    @extend_schema(operation_id="score_run_predictions", responses={(200, "text/tab-separated-values"): bytes},
                   description="The run's per-instance predictions as a TSV download (409 until computed).")
    def get(self, request: Request, pk: int) -> Any:
        return predictions_download(run=get_object_or_404(_runs(), pk=pk))
