"""The researcher API of studies (model permissions: core.permissions.ModelPermission, the project's default):
list, create (the same `study_build` as create_study and the admin), open, progress, participants with their
recommendations, and the responses and decisions exports."""
from __future__ import annotations

from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, serializers
from annotation.api.sessions import _valid
from annotation.models import ORDERING_KINDS, Participant, Study
from annotation.models import Response as ResponseRow
from annotation.services import exports
from annotation.services.study_build import study_build
from annotation.services.study_settings import STUDY_SETTINGS
from annotation.services.study_setup import study_close, study_open, study_participant_links
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.personal_data_doors import personal_data_door

RESEARCHER_ERRORS = {
    code: OpenApiResponse(serializers.ErrorSerializer, description=text)
    for code, text in {
        400: "invalid input (the message names the field)", 403: "you lack the model permission this needs",
        404: "unknown study", 409: "conflicts with the current state (an existing slug, a study without items)",
    }.items()
}


def _study(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study '{slug}' not found.", code=NOT_FOUND, status=404)
    return study


class StudyListView(APIView):
    permission_model = Study

    @extend_schema(operation_id="study_list", responses={200: serializers.StudyProgressSerializer(many=True)},
                   tags=["studies"], description="Every study with its progress.")
    def get(self, request: Request) -> Response:
        return Response([selectors.study_progress(study=s) for s in Study.objects.all()])

    @extend_schema(operation_id="study_create", request=serializers.StudyCreateInput,
                   responses={201: OpenApiTypes.OBJECT, **RESEARCHER_ERRORS}, tags=["studies"],
                   description="Create a study of any kind as the create_study command and the admin's \"Create a "
                               "study\" do (annotation.services.study_build): ordering studies drawn from task "
                               "instances (with a sampling plan and practice items), Likert and ranking studies "
                               "(items, system outputs, or a rewrite study's accepted rewrites; a rating preset), "
                               "reviewed rewrite studies. A draft unless `open` (a study opens only with items). "
                               "Refused when it asks for screening questions and none fit its components and setup. "
                               "Answers the study's progress, its codes and its participant links.")
    def post(self, request: Request) -> Response:
        data = _valid(serializers.StudyCreateInput, request.data)
        built = study_build(**study_build_kwargs(data), study_status=Study.Status.DRAFT)
        study = study_open(study=built.study) if data["open"] else built.study
        body = {**_study_body(request, study), "sampling_plan": built.sampling_plan,
                "practice_items": built.practice_items}
        if built.sources is not None:
            body["sources"] = built.sources
        return Response(body, status=status.HTTP_201_CREATED)


def study_build_kwargs(data: dict[str, Any]) -> dict[str, Any]:
    """study_build's arguments from the validated body (StudyCreateInput): the declared settings as they are."""
    kwargs: dict[str, Any] = {
        "slug": data["slug"], "kind": data["kind"], "setup": data["setup"], "corpus": data["corpora"] or None,
        "component": data["components"] or None, "status": data["instance_status"], "count": data["count"],
        "seed": data["seed"], "target_validated": data["target_validated"],
        "validation_rates": data["validation_rates"], "rates_from_studies": data["rates_from_studies"],
        "practice": data["practice"], "items": data["items"], "outputs_study": data["outputs_study"],
        "preset": data["preset"], "questions": data["questions"],
        "eligibility_questions": data["eligibility_questions"],
        **{setting.name: data[setting.name] for setting in STUDY_SETTINGS},
    }
    if data["outputs"] is not None:
        kwargs["outputs"] = list(enumerate(data["outputs"], start=1))
    if data["kind"] not in ("ordering", *ORDERING_KINDS) and data["rewrite"] is None:
        kwargs["rewrite_min_length"] = data["rewrite_min_length"]
    spec = data["rewrite"]
    if spec is not None:
        kwargs["rewrite"] = {
            "sources": None if spec["sources"] is None else [(row["id"].strip(), row["text"])
                                                             for row in spec["sources"]],
            "sources_corpus": spec["sources_corpus"], "side": spec["side"], "target_style": spec["target_style"],
            "filters": spec["filters"] or {}, "examples": spec["examples"] or None, "min_length": spec["min_length"],
            "max_length": spec["max_length"], "copy_threshold": spec["copy_threshold"], "persona": spec["persona"],
            "persona_from_platform": spec["persona_from_platform"],
            "min_accepted": spec["qualify_min_accepted"], "min_rate": spec["qualify_min_rate"],
            "signal_thresholds": spec["signal_thresholds"], "signal_auto_reject": spec["signal_auto_reject"],
        }
    return kwargs


def _study_body(request: Request, study: Study) -> dict[str, Any]:
    return {**selectors.study_progress(study=study), "status": study.status, "language": study.language,
            "completion_code": study.completion_code, "screened_out_code": study.screened_out_code,
            "task_description": study.task_description, "url": f"/s/{study.slug}/",
            "links": study_participant_links(study=study, base_url=request.build_absolute_uri("/"))}


class StudyOpenView(APIView):
    permission_model = Study
    permission_actions = {"POST": "change"}

    @extend_schema(operation_id="study_open", request=None, responses={200: OpenApiTypes.OBJECT,
                                                                       **RESEARCHER_ERRORS},
                   tags=["studies"], description="Open a draft study to participants (409 while it has no items).")
    def post(self, request: Request, slug: str) -> Response:
        return Response(_study_body(request, study_open(study=_study(slug))))


class StudyCloseView(APIView):
    permission_model = Study
    permission_actions = {"POST": "change"}

    @extend_schema(operation_id="study_close", request=None, responses={200: OpenApiTypes.OBJECT,
                                                                        **RESEARCHER_ERRORS},
                   tags=["studies"], description="Close a study: no new sessions, open sessions end now, and its "
                                                 "retention period starts. Closing a closed study changes nothing.")
    def post(self, request: Request, slug: str) -> Response:
        result = study_close(study=_study(slug))
        return Response({**_study_body(request, _study(slug)), "closed_at": result["closed_at"],
                         "already_closed": result["already_closed"], "sessions_ended": result["sessions_ended"]})


class StudyDetailView(APIView):
    permission_model = Study

    @extend_schema(operation_id="study_progress", responses={200: serializers.StudyProgressSerializer})
    def get(self, request: Request, slug: str) -> Response:
        """One study's progress: items complete, responses, participants, pay."""
        return Response(selectors.study_progress(study=_study(slug)))


class StudyParticipantsView(APIView):
    permission_model = Participant

    @extend_schema(operation_id="study_participants",
                   responses={200: serializers.RecommendationSerializer(many=True)})
    def get(self, request: Request, slug: str) -> Response:
        """Per participant: answers, failed attention checks, speeding, the reviewers' decisions on rewrites and
        their writing signals, and a Prolific-style recommendation. Writers' raw platform ids only with the
        personal-data permission (logged); keyed pseudonyms otherwise."""
        study = _study(slug)
        body = exports.study_recommendations(study=study)
        return Response(personal_data_door(request=request, door="api", what="participants (raw ids)", body=body,
                                           people=[(r["platform"], r["participant"]) for r in body],
                                           study_slug=study.slug))


class StudyResponsesExportView(APIView):
    permission_model = ResponseRow

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[Any, str]:
        # `?format=` names the export format here, not a DRF renderer (DRF's URL_FORMAT_OVERRIDE would 404).
        return JSONRenderer(), JSONRenderer.media_type

    @extend_schema(
        operation_id="study_responses_export",
        parameters=[OpenApiParameter("format", str, enum=["csv", "jsonl"], description="default csv"),
                    OpenApiParameter("salt", str, description="release salt: re-keys the participants' pseudonyms"),
                    OpenApiParameter("raw_ids", bool, description="platform ids instead of pseudonyms: needs the "
                                                                  "personal-data permission, and is logged")],
        responses={(200, "text/csv"): str, (200, "application/x-ndjson"): str, **RESEARCHER_ERRORS},
    )
    def get(self, request: Request, slug: str) -> StreamingHttpResponse:
        """Every response of the study, streamed as CSV (formula cells neutralized) or JSON lines; participants are
        keyed pseudonyms unless `raw_ids=true`."""
        fmt = request.query_params.get("format", "csv")
        raw_ids = request.query_params.get("raw_ids", "").lower() in ("1", "true", "yes")
        study = _study(slug)
        if raw_ids:
            exports.responses_raw_ids_check(study=study, user=request.user, door="api", fmt=fmt)
        chunks = exports.responses_serialize(study=study, fmt=fmt, raw_ids=raw_ids,
                                             salt=request.query_params.get("salt", ""))
        # Validates the format before the streaming response starts; a study without answers has no chunk at all
        # in JSON lines (an empty body), where CSV still has its header.
        first = next(chunks, "")
        content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
        response = StreamingHttpResponse(_chain(first, chunks), content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{slug}-responses.{fmt}"'
        return response


class StudyDecisionsExportView(APIView):
    permission_model = Participant  # participant ids and their recommendations, as StudyParticipantsView

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[Any, str]:
        return JSONRenderer(), JSONRenderer.media_type  # `?format=` names the platform here

    @extend_schema(
        operation_id="study_decisions_export",
        parameters=[OpenApiParameter("format", str, enum=list(exports.DECISION_FORMATS),
                                     description="prolific (default): one row per participant; mturk: per assignment")],
        responses={(200, "text/csv"): str, **RESEARCHER_ERRORS}, tags=["studies"],
        description="Approve / reject / return per participant with the reason, as a CSV for the platform's bulk "
                    "actions. Cells are neutralized against spreadsheet formula injection.",
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        fmt = request.query_params.get("format", "prolific")
        body = exports.decisions_serialize(study=_study(slug), fmt=fmt, user=request.user, door="api")
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{slug}-decisions-{fmt}.csv"'
        return response


def _chain(first: str, rest: Any) -> Any:
    yield first
    yield from rest
