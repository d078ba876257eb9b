"""The annotator JSON API: a participant's session (start or resume, consent, eligibility, start, next item,
answers) and the ping views the load benchmark measures. No login, no CSRF: the session token is the credential."""
from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.utils import translation
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import serializers, throttles
from annotation.error_codes import NOT_RESERVED
from annotation.models import Study
from annotation.services import answers, hot_path, session_creation, sessions
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.middleware import client_address
from core.parsers import StrictJSONParser

ERRORS = {
    code: OpenApiResponse(serializers.ErrorSerializer, description=text)
    for code, text in {
        400: "invalid body or answer", 403: "screened out", 404: "unknown token/study, or item not reserved",
        409: "wrong state, a different answer, no work available, in progress in another browser, study busy",
        410: "the batch time limit passed",
        413: "body larger than PARTICIPANT_MAX_BODY_BYTES", 500: "server error (same JSON shape)",
    }.items()
}
# The shapes of what the server hands out (secrets.token_urlsafe: URL-safe base64), checked before any query so
# that junk (a NUL byte, a megabyte of text) never reaches the database.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,64}")
ITEM_SHAPE = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _valid(serializer_class: type, data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ParticipantView(APIView):
    """Participant endpoints: anyone holding a session token may call them. JSON in, JSON out."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]
    parser_classes = [StrictJSONParser]  # JSON only

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        # Loading the session or study switches to the study's language (study_language.participant_language_activate);
        # the default comes back when the request ends. Error bodies are built inside, so they are translated too.
        with translation.override(settings.LANGUAGE_CODE):
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        token = kwargs.get("token")
        if token is not None and not TOKEN_SHAPE.fullmatch(token):
            raise ApplicationError(gettext("Session not found."), code=NOT_FOUND, status=404)


def _answer_input(data: Any) -> dict[str, Any]:
    """The answer body; the common well-formed case is checked inline, anything else by the serializer (whose
    error messages the API documents)."""
    if isinstance(data, dict) and set(data) <= {"item", "answer", "seconds"} and "answer" in data:
        item, seconds = data.get("item"), data.get("seconds")
        if (isinstance(item, str) and ITEM_SHAPE.fullmatch(item)
                and (seconds is None or (isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                                         and 0 <= seconds < float("inf")))):
            return {"item": item, "answer": data["answer"], "seconds": None if seconds is None else float(seconds)}
    data = _valid(serializers.AnswerInput, data)
    if not ITEM_SHAPE.fullmatch(data["item"]):
        raise ApplicationError("This item is not reserved for this session.", code=NOT_RESERVED, status=404,
                               details={"item": ["not an item id of this session"]})
    return data


RESUME_COOKIE = "stylecrowd_resume"  # HttpOnly, path-scoped to one study's session endpoint: only its browser resumes


class SessionCreateView(ParticipantView):
    """Start or resume a session. Rate-limited per client address, then per study (a request refused for its
    address does not count against the study); a participant id alone never returns a token: the client proves
    it started the session with the resume cookie or the `token` it kept (docs/annotator-api.md)."""

    throttle_classes = [throttles.SessionCreateAddressThrottle, throttles.SessionCreateStudyThrottle]

    def check_throttles(self, request: Request) -> None:
        for throttle in self.get_throttles():
            if not throttle.allow_request(request, self):
                self.throttled(request, throttle.wait())

    @extend_schema(
        operation_id="session_create", request=serializers.SessionCreateInput,
        responses={201: serializers.SessionSerializer, 200: serializers.SessionSerializer, **ERRORS,
                   429: OpenApiResponse(serializers.ErrorSerializer, description="too many sessions opened")},
        description="Start (201) or resume (200) a participant's session of a study; 200 with `token: null` and "
                    "the completion code for a batch finished in this platform session.",
    )
    def post(self, request: Request, slug: str) -> Response:
        data = _valid(serializers.SessionCreateInput, request.data)
        proofs = tuple(t for t in (request.COOKIES.get(RESUME_COOKIE, ""), data["token"]) if t)
        result = session_creation.session_create(
            slug=slug, participant_id=data["participant"], platform=data["platform"], study_ref=data["study_ref"],
            session_ref=data["session_ref"], assignment=data["assignment"], hit=data["hit"], proofs=proofs,
            address=client_address(request),
        )
        body = sessions.session_payload(result.batch)
        if result.finished:
            body["token"] = None  # the code again, never the finished batch's credential
            return Response(body, status=status.HTTP_200_OK)
        response = Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)
        response.set_cookie(RESUME_COOKIE, result.batch.token, max_age=7 * 24 * 3600, path=request.path,
                            httponly=True, samesite="Strict", secure=settings.SESSION_COOKIE_SECURE)
        return response


class SessionDetailView(ParticipantView):
    @extend_schema(operation_id="session_detail", responses={200: serializers.SessionSerializer, **ERRORS})
    def get(self, request: Request, token: str) -> Response:
        return Response(sessions.session_payload(sessions.session_load(token=token)))


class SessionConsentView(ParticipantView):
    @extend_schema(operation_id="session_consent", request=serializers.ConsentInput,
                   responses={200: serializers.SessionSerializer, **ERRORS})
    def post(self, request: Request, token: str) -> Response:
        data = _valid(serializers.ConsentInput, request.data)
        batch = sessions.session_consent(token=token, agree=data["agree"], special_category=data["special_category"])
        return Response(sessions.session_payload(batch))


class SessionEligibilityView(ParticipantView):
    @extend_schema(operation_id="session_eligibility", request=serializers.EligibilityInput,
                   responses={200: serializers.SessionSerializer, **ERRORS})
    def post(self, request: Request, token: str) -> Response:
        data = _valid(serializers.EligibilityInput, request.data)
        return Response(sessions.session_payload(sessions.session_eligibility(token=token, answers=data["answers"])))


class SessionStartView(ParticipantView):
    @extend_schema(operation_id="session_start", request=None,
                   responses={200: serializers.SessionSerializer, **ERRORS})
    def post(self, request: Request, token: str) -> Response:
        return Response(sessions.session_payload(sessions.session_start(token=token)))


class SessionNextView(ParticipantView):
    @extend_schema(
        operation_id="session_next", responses={200: serializers.NextSerializer, **ERRORS},
        description="The item to answer now (the first unanswered one of the batch; the same again until it is "
                    "answered), or, with `item: null`, how the batch ended. The browser calls it to start and to "
                    "resume: each answer's response already carries this body under `next`.",
    )
    def get(self, request: Request, token: str) -> Response | HttpResponse:
        body = hot_path.next_fast(token=token)
        if body is not None:
            return HttpResponse(body, content_type="application/json")
        return Response(sessions.session_next_body(token=token))


class SessionAnswerView(ParticipantView):
    @extend_schema(
        operation_id="session_answer", request=serializers.AnswerInput,
        responses={201: serializers.AnswerResultSerializer, 200: serializers.AnswerResultSerializer, **ERRORS},
        description="201 when stored; 200 when the same answer was already stored; 409 for a different one. Both "
                    "201 and 200 carry `next`: the body `GET …/next/` would answer right now (the next item, or "
                    "the batch's end with its code), so one request per item is enough. A free-text answer may "
                    "carry `telemetry` (counts and durations, docs/annotator-api.md); a malformed or oversized "
                    "block is a 400 and nothing is stored.",
    )
    def post(self, request: Request, token: str) -> HttpResponse:
        data = _answer_input(request.data)
        result = answers.answer_submit(token=token, item=data["item"], answer=data["answer"],
                                       seconds=data.get("seconds"), telemetry=data.get("telemetry"))
        # Written here rather than by DRF's renderer: `next` is already JSON (the hot path's stored item text).
        head = json.dumps({"stored": result.stored, "state": result.state, "progress": result.progress},
                          separators=(",", ":"))
        body = head if result.next_body is None else f'{head[:-1]},"next":{result.next_body.decode()}}}'
        return HttpResponse(body, status=status.HTTP_201_CREATED if result.stored else status.HTTP_200_OK,
                            content_type="application/json")


class PingView(ParticipantView):
    """A trivial JSON view on the same stack as the participant endpoints (no database): the load benchmark's
    throughput ceiling."""

    @extend_schema(operation_id="ping", responses={200: serializers.PingSerializer})
    def get(self, request: Request) -> Response:
        return Response({"ok": True})


class PingDatabaseView(PingView):
    """The same trivial view plus one primary-key read: the ceiling of a view that needs the database at all."""

    @extend_schema(operation_id="ping_database", responses={200: serializers.PingSerializer})
    def get(self, request: Request) -> Response:
        Study.objects.filter(pk=1).values_list("pk", flat=True).first()
        return Response({"ok": True})
