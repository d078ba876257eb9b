"""POST /api/v1/participants/erase/: one person's data erased from every study, as a background job (the same
service as `manage.py erase_participant` and the admin's "Erase this person's data")."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Participant
from core.erasure import ERASABLE_PLATFORMS, participant_erase_start
from core.parsers import StrictJSONParser
from core.personal_data import PERSONAL_DATA_PERMISSION, can_see_personal_data
from core.views import JobAcceptedSchema, job_accepted

ERASE_PERMISSION = "annotation.delete_participant"


def may_erase(user: Any) -> bool:
    """Erasing needs both the personal-data permission (the raw id is typed in) and the right to delete
    participants; superusers hold both."""
    return can_see_personal_data(user) and user.has_perm(ERASE_PERMISSION)


class MayErase(BasePermission):
    message = f"Erasing a participant needs the {PERSONAL_DATA_PERMISSION} and {ERASE_PERMISSION} permissions."

    def has_permission(self, request: Request, view: Any) -> bool:
        return may_erase(request.user)


class ParticipantEraseInput(serializers.Serializer):
    platform = serializers.ChoiceField(choices=ERASABLE_PLATFORMS,
                                       help_text="A platform's participant is erased with every imported annotator "
                                                 "stored under the same id; imported: only imported annotators.")
    id = serializers.CharField(max_length=128, help_text="The participant's platform id (PROLIFIC_PID, WorkerId), or "
                                                         "an imported annotator's id.")
    apply = serializers.BooleanField(default=False, help_text="False: a dry run (the job's result lists what would "
                                                              "go, table by table, and under `imported` how many "
                                                              "imported participants and ratings).")
    reason = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")


class ParticipantEraseView(APIView):
    permission_model = Participant
    permission_classes = [MayErase]
    parser_classes = [StrictJSONParser]

    @extend_schema(request=ParticipantEraseInput, responses={202: JobAcceptedSchema})
    def post(self, request: Request) -> Response:
        """Erase one person's data across every study in the background (404 when no data is held for the id)."""
        serializer = ParticipantEraseInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        job = participant_erase_start(platform=data["platform"], external_id=data["id"], apply=data["apply"],
                                      reason=data["reason"], requested_by=request.user.get_username())
        return job_accepted(job)
