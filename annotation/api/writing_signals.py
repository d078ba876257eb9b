"""The researcher API of writing signals: a rewrite study's rewrites with their telemetry status and signals, and
starting their measurement (a job, 202). Model permissions on `WritingSignal`: view to read, add to measure."""
from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.sessions import _valid
from annotation.api.studies import RESEARCHER_ERRORS, _study
from annotation.error_codes import NOT_A_REWRITE_STUDY
from annotation.models import ItemKind, WritingSignal
from annotation.models import Response as ResponseRow
from annotation.services.writing_signals.jobs import writing_signals_start
from annotation.services.writing_signals.services import signals_of
from core.errors import ApplicationError
from core.personal_data_doors import personal_data_door
from core.views import JobAcceptedSchema, job_accepted


class WritingSignalsStartInput(serializers.Serializer):
    thresholds = serializers.DictField(required=False, default=None, allow_null=True,
                                       help_text='Saved on the study first: {"signal": number or null (off)}.')
    auto_reject = serializers.ListField(child=serializers.CharField(), required=False, default=None,
                                        allow_null=True, help_text="Signals whose flag rejects a pending rewrite "
                                                                   "(the researcher's rule); [] clears the rule.")
    language_model = serializers.CharField(required=False, allow_blank=True, default="",
                                           help_text="A local causal LM directory inside the data folders; empty: "
                                                     "STYLECROWD_WRITING_LM (unset: LLM-likeness is off).")
    near_duplicate_method = serializers.ChoiceField(choices=["chars", "embedding"], default="chars")
    embedding_model = serializers.CharField(required=False, allow_blank=True, default="")
    rewrite_model_url = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=500,
        help_text="An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) whose model rewrites each source as "
                  "the writers were asked to: switches on model_similarity. Checked (it must answer) before queueing.")
    rewrite_model = serializers.CharField(required=False, allow_blank=True, default="", max_length=200,
                                          help_text="The model the endpoint serves (with rewrite_model_url).")
    api_key_env = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=128,
        help_text="The name of the environment variable (of the server and the worker) holding the endpoint's key; "
                  "default OPENAI_API_KEY. Never the key itself: it is read when the requests are made, never stored.")


class WritingSignalsView(APIView):
    permission_model = WritingSignal

    @extend_schema(operation_id="study_writing_signals", tags=["studies"],
                   responses={200: OpenApiTypes.OBJECT, **RESEARCHER_ERRORS},
                   description="Every rewrite of a rewrite study with its telemetry status and its writing signals "
                               "(score, threshold, flagged, evidence).")
    def get(self, request: Request, slug: str) -> Response:
        study = _study(slug)
        if study.item_kind != ItemKind.REWRITE:
            raise ApplicationError(f"Study {slug!r} holds {study.item_kind} items, not rewrites.",
                                   code=NOT_A_REWRITE_STUDY)
        rows = list(ResponseRow.objects.filter(study=study, study_item__kind=ItemKind.REWRITE)
                    .order_by("answered_at", "pk").values("pk", "participant__platform", "participant__external_id",
                                                          "study_item__external_id", "telemetry_status", "is_valid",
                                                          "review__status"))
        signals = signals_of(response_ids=[r["pk"] for r in rows])
        body = [{
            "response": r["pk"], "participant": f"{r['participant__platform']}:{r['participant__external_id']}",
            "source_id": r["study_item__external_id"], "telemetry": r["telemetry_status"], "is_valid": r["is_valid"],
            "review": r["review__status"] or "pending", "signals": signals.get(r["pk"], []),
        } for r in rows]
        people = [(r["participant__platform"], r["participant__external_id"]) for r in rows]
        return Response(personal_data_door(request=request, door="api", what="writing signals (writers' raw ids)",
                                           body=body, people=people, study_slug=study.slug))

    @extend_schema(operation_id="study_writing_signals_start", tags=["studies"], request=WritingSignalsStartInput,
                   responses={202: JobAcceptedSchema, **RESEARCHER_ERRORS},
                   description="Save the given thresholds and auto-reject rule on the study, then measure its writing "
                               "signals and apply the rule in the background.")
    def post(self, request: Request, slug: str) -> Response:
        data: dict[str, Any] = _valid(WritingSignalsStartInput, request.data)
        study = _study(slug)
        job = writing_signals_start(
            study_slug=study.slug, thresholds=data["thresholds"], auto_reject=data["auto_reject"],
            language_model=data["language_model"] or None, near_duplicate_method=data["near_duplicate_method"],
            embedding_model=data["embedding_model"] or None, rewrite_model_url=data["rewrite_model_url"] or None,
            rewrite_model=data["rewrite_model"] or None, api_key_env=data["api_key_env"] or None,
            created_by=request.user.get_username(), check_paths=True)
        return job_accepted(job)
