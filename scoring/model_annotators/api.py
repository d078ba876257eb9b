"""REST door to model annotators (model permissions): start a run (202 with its job), read it and its answers,
stop it, make it the guide of its study's adaptive stopping."""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study, StudyItem
from core.permissions import user_may
from core.views import job_accepted, job_accepted_schema, job_body
from scoring.agreement.selectors import study_get
from scoring.models import ModelAnswer, ModelRun

from .guidance import model_guidance_apply
from .runs import model_run_start, model_run_stop, model_run_summary
from .selectors import item_verdicts, model_answers_frame

MAX_ANSWERS = 1000


class ModelRunInput(serializers.Serializer):
    study = serializers.SlugField()
    backend = serializers.CharField(help_text="openai (an OpenAI-compatible chat endpoint) or local (a causal LM "
                                              "directory on the worker).")
    base_url = serializers.CharField(required=False, allow_blank=True, default="",
                                     help_text="e.g. http://127.0.0.1:8000/v1; the key comes from OPENAI_API_KEY.")
    model = serializers.CharField(required=False, allow_blank=True, default="")
    model_dir = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="local: a directory inside the data folders (STYLECROWD_DATA_DIRS).")
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=120)
    concurrency = serializers.IntegerField(required=False, default=4)
    timeout = serializers.FloatField(required=False, default=60.0)
    max_retries = serializers.IntegerField(required=False, default=3)
    backoff = serializers.FloatField(required=False, default=1.0)
    structured = serializers.BooleanField(required=False, default=True)
    max_tokens = serializers.IntegerField(required=False, default=64)
    device = serializers.CharField(required=False, default="auto")
    price_input = serializers.FloatField(required=False, default=0.0, help_text="Per 1,000 prompt tokens.")
    price_output = serializers.FloatField(required=False, default=0.0, help_text="Per 1,000 completion tokens.")
    limit = serializers.IntegerField(required=False, allow_null=True, default=None)


class ModelGuideInput(serializers.Serializer):
    stop_after = serializers.IntegerField(required=False, allow_null=True, default=None,
                                          help_text="Agreeing first human answers that stop an item (default m-1).")


def _runs() -> Any:
    return ModelRun.objects.select_related("job", "study")


def _body(run: ModelRun) -> dict[str, Any]:
    return {**model_run_summary(run), "job": job_body(run.job) if run.job else None}


class ModelRunListView(APIView):
    permission_model = ModelRun

    @extend_schema(operation_id="model_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        """The latest 100 model runs (optionally of one study: ?study=SLUG)."""
        runs = _runs()
        if request.query_params.get("study"):
            runs = runs.filter(study=study_get(slug=request.query_params["study"]))
        return Response({"runs": [_body(run) for run in runs[:100]]})

    @extend_schema(operation_id="model_runs_start", request=ModelRunInput,
                   responses={202: job_accepted_schema("model run")})
    def post(self, request: Request) -> Response:
        """Check the endpoint or model directory and the study, then queue the run (default queue for an endpoint,
        gpu for a local model); poll the returned job."""
        serializer = ModelRunInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        study = study_get(slug=data.pop("study"))
        run = model_run_start(study=study, created_by=request.user.get_username(), **data)
        return job_accepted(run.job, **model_run_summary(run))


class ModelRunDetailView(APIView):
    permission_model = ModelRun

    @extend_schema(operation_id="model_run_detail", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        """One run with its counts, tokens, cost and summary."""
        return Response(_body(get_object_or_404(_runs(), pk=pk)))


class ModelRunAnswersView(APIView):
    permission_model = ModelRun

    @extend_schema(operation_id="model_run_answers", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        """The run's answers (up to 1,000 from ?offset=N): item, question, order, canonical answer, status; and
        (with ?verdicts=1) each item's verdict across orders: order-sensitive or not, the answer given in every
        order."""
        run = get_object_or_404(_runs(), pk=pk)
        try:
            offset = max(0, int(request.query_params.get("offset", 0)))
        except ValueError:
            offset = 0
        rows = ModelAnswer.objects.filter(run=run).select_related("study_item")[offset:offset + MAX_ANSWERS]
        body: dict[str, Any] = {}
        if request.query_params.get("verdicts") in ("1", "true"):
            names = dict(StudyItem.objects.filter(study_id=run.study_id).values_list("pk", "external_id"))
            body["verdicts"] = [
                {"item": names.get(int(v.item_id), ""), "question": v.question, "orders": int(v.n_orders),
                 "answered": int(v.n_answered), "order_sensitive": bool(v.order_sensitive),
                 "consistent_answer": v.consistent}
                for v in item_verdicts(model_answers_frame(run=run)).itertuples()]
        return Response({"model_run": run.pk, "offset": offset, **body, "answers": [
            {"item": a.study_item.external_id, "question": a.question, "order": a.order,
             "displayed_answer": a.displayed_answer, "answer": a.answer, "value": a.value, "status": a.status,
             "is_correct": a.is_correct, "from_cache": a.from_cache, "error": a.error} for a in rows]})


class ModelRunStopView(APIView):
    permission_model = ModelRun
    permission_actions = {"POST": "change"}

    @extend_schema(operation_id="model_run_stop", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, pk: int) -> Response:
        """The stop button: no new question is sent; the answers in are kept (409 once the run has finished)."""
        return Response(_body(model_run_stop(run=get_object_or_404(_runs(), pk=pk))))


class ModelRunGuideView(APIView):
    permission_model = ModelRun
    permission_actions = {"POST": "change"}

    @extend_schema(operation_id="model_run_guide", request=ModelGuideInput, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, pk: int) -> Response:
        """Make the finished run the guide of its (adaptive) study: items stop once their first human answers agree
        with the answer the model gave in every order."""


        if not user_may(request.user, Study, "change"):
            raise PermissionDenied("Using a guide changes how the study stops items: it needs the permission to "
                                   "change studies.")
        serializer = ModelGuideInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = get_object_or_404(_runs(), pk=pk)
        return Response(model_guidance_apply(run=run, stop_after=serializer.validated_data["stop_after"]))
