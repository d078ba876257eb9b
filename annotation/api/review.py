"""The researcher API of rewrite review: a rewrite study's review queue (pending rewrites with their writing
signals) and a reviewer's decision on one rewrite (accept, or reject with a reason the writer is shown). The same
service as the admin's review queue and `review_rewrites` (annotation/services/review.py). Model permissions on
`RewriteReview`: view to read the queue, change to decide (as the admin queue)."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.sessions import _valid
from annotation.api.studies import RESEARCHER_ERRORS, _study
from annotation.error_codes import NOT_A_REWRITE_STUDY
from annotation.models import ItemKind, RejectionReason, RewriteReview
from annotation.services.review import DECISIONS, QUEUE_FILTERS, QUEUE_ORDERS, review_decide, review_queue
from annotation.services.writing_signals.registry import SPECS
from core.errors import ApplicationError
from core.personal_data_doors import personal_data_door


class ReviewSignalSerializer(serializers.Serializer):
    signal = serializers.CharField()
    label = serializers.CharField(required=False)
    score = serializers.FloatField(allow_null=True)
    threshold = serializers.FloatField(allow_null=True)
    flagged = serializers.BooleanField()
    evidence = serializers.CharField(allow_blank=True)


class ReviewQueueRowSerializer(serializers.Serializer):
    response = serializers.IntegerField(help_text="The rewrite's id: send it back with the decision.")
    study = serializers.CharField()
    source_id = serializers.CharField()
    source = serializers.CharField()
    rewrite = serializers.CharField()
    target_style = serializers.CharField(allow_blank=True)
    participant = serializers.CharField(help_text="platform:id of the writer (platform:pseudonym without the "
                                                  "personal-data permission).")
    flagged = serializers.BooleanField(help_text="The writer was blocked after writing it.")
    telemetry = serializers.CharField()
    signals = ReviewSignalSerializer(many=True)
    signal_flags = serializers.IntegerField()


class ReviewDecisionInput(serializers.Serializer):
    response = serializers.IntegerField(help_text="The rewrite's id (the queue's `response`).")
    decision = serializers.ChoiceField(choices=list(DECISIONS))
    reason = serializers.ChoiceField(choices=["", *RejectionReason.values], required=False, default="",
                                     help_text="A rejection's reason (required to reject); the writer is shown it.")
    reason_text = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                        help_text="A note for the writer (required with reason `other`).")


class ReviewDecisionSerializer(serializers.Serializer):
    response = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RewriteReview.Status.values)
    reason = serializers.CharField(allow_blank=True)
    reason_text = serializers.CharField(allow_blank=True)
    reviewer = serializers.CharField()


def _rewrite_study(slug: str) -> Any:
    study = _study(slug)
    if study.item_kind != ItemKind.REWRITE:
        raise ApplicationError(f"Study {slug!r} holds {study.item_kind} items, not rewrites.",
                               code=NOT_A_REWRITE_STUDY)
    return study


class StudyReviewsView(APIView):
    permission_model = RewriteReview
    permission_actions = {"POST": "change"}  # a decision changes a review, as in the admin's queue

    @extend_schema(
        operation_id="study_review_queue", tags=["studies"],
        parameters=[
            # The values review_queue_check accepts, stated (the signals' registry is fixed at import).
            OpenApiParameter("show", str, required=False, enum=[*sorted(QUEUE_FILTERS), *sorted(SPECS)],
                             description="flagged, unflagged, no_telemetry, inconsistent, or a signal's name"),
            OpenApiParameter("order", str, required=False,
                             enum=[*QUEUE_ORDERS, *(f"signal:{name}" for name in sorted(SPECS))],
                             description=f"{', '.join(QUEUE_ORDERS)} (default oldest), or signal:NAME"),
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, required=False,
                             description="at most this many rows (1-1000, default 200)"),
        ],
        responses={200: ReviewQueueRowSerializer(many=True), **RESEARCHER_ERRORS},
        description="The study's pending rewrites (no decision yet) with their writing signals, in the admin "
                    "queue's order: rewrites of blocked writers first, then the oldest.")
    def get(self, request: Request, slug: str) -> Response:
        study = _rewrite_study(slug)
        try:
            limit = int(request.query_params.get("limit", "200"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            raise ApplicationError("limit must be an integer within 1…1000.", field="limit")
        rows = review_queue(study=study, limit=limit, show=request.query_params.get("show", ""),
                            order=request.query_params.get("order", "oldest"))
        return Response(personal_data_door(request=request, door="api", what="review queue (writers' raw ids)",
                                           body=rows, people=[tuple(r["participant"].split(":", 1)) for r in rows],
                                           study_slug=study.slug))

    @extend_schema(
        operation_id="study_review_decide", tags=["studies"], request=ReviewDecisionInput,
        responses={200: ReviewDecisionSerializer, **RESEARCHER_ERRORS},
        description="Accept or reject one pending rewrite of the study. A rejection needs a reason (`other` also a "
                    "text), which the writer is shown on their next visit; it invalidates the rewrite and reopens "
                    "its slot for another writer. 409 when it was decided already (by another reviewer).")
    def post(self, request: Request, slug: str) -> Response:
        study = _rewrite_study(slug)
        data = _valid(ReviewDecisionInput, request.data)
        review = review_decide(response_id=data["response"], decision=data["decision"], reason=data["reason"],
                               reason_text=data["reason_text"], reviewer=request.user, study=study)
        return Response({"response": review.response_id, "status": review.status, "reason": review.reason,
                         "reason_text": review.reason_text, "reviewer": request.user.get_username()},
                        status=status.HTTP_200_OK)
