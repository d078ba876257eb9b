"""REST door to metric meta-evaluations (admin users): start one, read its results, fetch its plot."""
from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.http_cache import revalidated_response
from core.views import job_accepted, job_accepted_schema, job_body
from scoring.error_codes import NOT_COMPUTED
from scoring.models import MetricEvaluation

from . import metric_names
from .plots import evaluation_plot_cached
from .services import metric_evaluation_start, metric_evaluation_summary


class MetricEvaluationInput(serializers.Serializer):
    study = serializers.SlugField()
    question = serializers.CharField(max_length=64)
    metrics = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    by = serializers.ChoiceField(choices=["", "style", "dataset"], default="", required=False)
    options = serializers.DictField(required=False, default=dict, help_text=(
        'Shared "model_path", "device", "batch_size", and per metric {"logprob": {"model_path": …}}.'))


EvaluationSchema = inline_serializer("MetricEvaluationResult", {
    "evaluation": serializers.IntegerField(), "study": serializers.CharField(), "question": serializers.CharField(),
    "metrics": serializers.ListField(child=serializers.CharField()), "n_items": serializers.IntegerField(),
    "n_ratings": serializers.IntegerField(), "correlations": serializers.JSONField(),
    "timings": serializers.JSONField(), "computed": serializers.BooleanField(),
    "job": serializers.JSONField(allow_null=True), "results": serializers.JSONField(required=False),
    "params": serializers.JSONField(required=False),
})
EvaluationListSchema = inline_serializer("MetricEvaluationList", {
    "metrics": serializers.ListField(child=serializers.CharField()),
    "evaluations": serializers.ListField(child=serializers.JSONField()),
})


def _evaluation_body(evaluation: Any, *, full: bool) -> dict[str, Any]:
    body = {**metric_evaluation_summary(evaluation), "computed": evaluation.is_computed,
            "job": job_body(evaluation.job) if evaluation.job else None}
    if full:
        body["results"] = evaluation.results
        body["params"] = evaluation.params
    return body


def _evaluations() -> Any:
    return MetricEvaluation.objects.select_related("study", "job")


class MetricEvaluationListView(APIView):
    permission_model = MetricEvaluation

    @extend_schema(operation_id="metric_evaluations_list", responses=EvaluationListSchema)
    def get(self, request: Request) -> Response:
        """The metrics available and the latest 100 evaluations."""
        return Response({"metrics": metric_names(),
                         "evaluations": [_evaluation_body(e, full=False) for e in _evaluations()[:100]]})

    @extend_schema(operation_id="metric_evaluations_start", request=MetricEvaluationInput,
                   responses={202: job_accepted_schema("evaluation", EvaluationSchema)})
    def post(self, request: Request) -> Response:
        """Validate and queue an evaluation (model metrics on the `gpu` queue); poll the returned job."""
        serializer = MetricEvaluationInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        evaluation = metric_evaluation_start(
            study_slug=data["study"], question=data["question"], metric_names=data["metrics"], by=data["by"],
            options=data["options"], created_by=request.user.get_username(),
        )
        return job_accepted(evaluation.job, **_evaluation_body(evaluation, full=False))


class MetricEvaluationDetailView(APIView):
    permission_model = MetricEvaluation

    @extend_schema(operation_id="metric_evaluations_detail", responses=EvaluationSchema)
    def get(self, request: Request, pk: int) -> Response:
        """One evaluation with its per-item scores and correlations."""
        return Response(_evaluation_body(get_object_or_404(_evaluations(), pk=pk), full=True))


class MetricEvaluationPlotView(APIView):
    permission_model = MetricEvaluation

    @extend_schema(responses={(200, "image/png"): bytes})
    def get(self, request: Request, pk: int) -> HttpResponse:
        """The evaluation's plot (PNG), drawn once and kept as a file; 409 until computed."""
        evaluation = get_object_or_404(_evaluations(), pk=pk)
        if not evaluation.is_computed:
            return Response({"error": {"code": NOT_COMPUTED, "message": "the evaluation has not finished yet"}},
                            status=status.HTTP_409_CONFLICT)
        key = f"metric-evaluation-{evaluation.pk}-{evaluation.computed_at.isoformat()}"
        return revalidated_response(request, key=key, modified=evaluation.computed_at, content_type="image/png",
                                    render=lambda: evaluation_plot_cached(evaluation))
