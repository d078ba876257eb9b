"""Participant endpoints for practice items (annotation/services/practice.py); same token, errors and JSON shape
as the other session endpoints."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.api.sessions import ParticipantView
from annotation.services.practice import practice_answer, practice_next
from core.error_codes import INVALID
from core.errors import ApplicationError


class SessionPracticeView(ParticipantView):
    @extend_schema(operation_id="session_practice_next", responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, token: str) -> Response:
        """The next practice item of the participant (`item: null` when none is left)."""
        return Response(practice_next(token=token))

    @extend_schema(operation_id="session_practice_answer", request=OpenApiTypes.OBJECT,
                   responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, token: str) -> Response:
        """Answer a practice item (`{"item": "practice-7", "answer": "S1-S2"}`); the reply is the feedback. Practice
        answers are never counted as responses."""
        if not isinstance(request.data, dict):
            raise ApplicationError("Expected a JSON object with item and answer.", code=INVALID)
        return Response(practice_answer(token=token, item=request.data.get("item"), answer=request.data.get("answer")))
