"""The platforms API: accounts, a study's platform side, and the jobs that publish, sync, decide, pay and message
(each answers 202 with the job under "job"; the finished job's `result` is the same summary the commands print).

Dry runs need the model's add permission; applying decisions, paying bonuses, messaging people and publishing need
`platforms.spend_platformstudy` ("Can send decisions, pay bonuses and message participants")."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.serializers import ErrorSerializer
from core.error_codes import PERMISSION_DENIED
from core.errors import ApplicationError
from core.permissions import user_may
from core.personal_data_doors import personal_data_door
from core.views import JobAcceptedSchema, job_accepted
from platforms import serializers as s
from platforms.models import BonusPayment, Decision, PlatformAccount, PlatformMessage, PlatformStudy
from platforms.services.accounts import account_create, platform_study_get, study_get
from platforms.services.jobs import platform_job_start
from platforms.services.preflight import platform_test_run, platform_test_run_check
from platforms.services.publish import platform_preflight
from platforms.services.webhooks import webhook_body_too_large, webhook_receive

ERRORS = {
    code: OpenApiResponse(ErrorSerializer, description=text)
    for code, text in {
        400: "invalid input, or the platform refused the request (the message names the field or the platform's "
             "reason)",
        403: "you lack the model permission this needs (applying decisions, paying and messaging need "
             "platforms.spend_platformstudy)",
        404: "unknown study or account", 409: "conflicts with the current state (no account, not published, busy)",
        502: "the platform answered with an error; 503: it could not be reached or is rate-limiting (Retry-After)",
    }.items()
}


def _valid(serializer_class: type, data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _spend_required(request: Request, what: str) -> None:
    if not user_may(request.user, PlatformStudy, "spend"):
        raise ApplicationError(f"{what} needs the permission to send decisions, pay bonuses and message participants "
                               "(platforms | platform study | Can send decisions, pay bonuses and message "
                               "participants).", code=PERMISSION_DENIED, status=403)


def _people_door(request: Request, platform_study: PlatformStudy, body: Any, workers: Any, what: str) -> Response:
    """A body naming workers: raw ids with the personal-data permission (logged), pseudonyms otherwise."""
    people = [(platform_study.platform, worker) for worker in workers]
    return Response(personal_data_door(request=request, door="api", what=what, body=body, people=people,
                                       study_slug=platform_study.study.slug))


def _jsonable(value: Any) -> Any:
    """Job parameters are stored as JSON: amounts as strings (exact), nested rules too."""

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


class PlatformAccountListView(APIView):
    permission_model = PlatformAccount

    @extend_schema(operation_id="platform_account_list", responses={200: s.PlatformAccountSerializer(many=True)},
                   tags=["platforms"], description="Platform accounts; tokens are never shown.")
    def get(self, request: Request) -> Response:
        return Response(s.PlatformAccountSerializer(PlatformAccount.objects.all(), many=True).data)

    @extend_schema(operation_id="platform_account_create", request=s.PlatformAccountInput,
                   responses={201: s.PlatformAccountSerializer, **ERRORS}, tags=["platforms"],
                   description="Create an account; the platform is asked first (a refused token stores nothing).")
    def post(self, request: Request) -> Response:
        account = account_create(**_valid(s.PlatformAccountInput, request.data))
        return Response(s.PlatformAccountSerializer(account).data, status=201)


class StudyPlatformView(APIView):
    permission_model = PlatformStudy

    @extend_schema(operation_id="study_platform", responses={200: s.PlatformStudySerializer, **ERRORS},
                   tags=["platforms"], description="The study's platform side: ids, state, what was sent.")
    def get(self, request: Request, slug: str) -> Response:
        return Response(s.PlatformStudySerializer(platform_study_get(study=study_get(slug=slug))).data)


class _JobView(APIView):
    kind = ""
    input_class: type = s.DecideInput
    spend_when = "apply"

    def post(self, request: Request, slug: str) -> Response:
        params = _valid(self.input_class, request.data)
        if params.get(self.spend_when):
            _spend_required(request, self.spend_what)
        params = _jsonable(params)
        job = platform_job_start(kind=self.kind, study_slug=slug, params=params,
                                 created_by=request.user.get_username())
        return job_accepted(job)


class StudyPlatformPublishView(_JobView):
    permission_model = PlatformStudy
    kind, input_class, spend_when, spend_what = "platform_publish", s.PublishInput, "publish", "Publishing"

    @extend_schema(operation_id="study_platform_publish", request=s.PublishInput,
                   responses={202: JobAcceptedSchema, **ERRORS}, tags=["platforms"],
                   description="Create the study's draft on its platform (once); with publish, publish it.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyPlatformPreflightView(APIView):
    permission_model = PlatformStudy

    @extend_schema(operation_id="study_platform_preflight", responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   tags=["platforms"], description=(
                       "Before publishing: the study's cost (Prolific's own calculator: total with fees and VAT, in "
                       "the account's currency; MTurk and the mock: computed, and said so), the participants "
                       "eligible for its filters (null where the platform cannot count) and warnings (fewer eligible "
                       "than places). The publish job's draft step puts the same under its result's \"preflight\"."))
    def get(self, request: Request, slug: str) -> Response:
        return Response(platform_preflight(platform_study=platform_study_get(study=study_get(slug=slug))))


class StudyPlatformTestRunView(APIView):
    permission_model = PlatformStudy
    permission_actions = {"POST": "change"}

    @extend_schema(operation_id="study_platform_test_run", request=s.TestRunInput,
                   responses={201: OpenApiTypes.OBJECT, **ERRORS}, tags=["platforms"], description=(
                       "A test participant's run of the draft through the real link (Prolific's test study, for the "
                       "workspace's test participants only: no money moves); with email, a test participant is "
                       "created first. Answers the test study's id and URL."))
    def post(self, request: Request, slug: str) -> Response:
        platform_study = platform_study_get(study=study_get(slug=slug))
        params = _valid(s.TestRunInput, request.data)
        return Response(platform_test_run(platform_study=platform_study, email=params["email"]), status=201)

    @extend_schema(operation_id="study_platform_test_run_check", parameters=[s.TestRunCheckInput],
                   responses={200: OpenApiTypes.OBJECT, **ERRORS}, tags=["platforms"], description=(
                       "The test run seen from the platform's side: each submission of the test study with its "
                       "status and code, and whether the study's completion code worked."))
    def get(self, request: Request, slug: str) -> Response:
        platform_study = platform_study_get(study=study_get(slug=slug))
        params = _valid(s.TestRunCheckInput, request.query_params)
        return Response(platform_test_run_check(platform_study=platform_study,
                                                test_study_id=params["test_study_id"]))


class StudyPlatformSyncView(_JobView):
    permission_model = PlatformStudy
    permission_actions = {"POST": "change"}
    kind = "platform_sync"

    @extend_schema(operation_id="study_platform_sync", request=None, responses={202: JobAcceptedSchema, **ERRORS},
                   tags=["platforms"], description="Read every submission from the platform and apply it.")
    def post(self, request: Request, slug: str) -> Response:
        study_get(slug=slug)
        job = platform_job_start(kind=self.kind, study_slug=slug, params={}, created_by=request.user.get_username())
        return job_accepted(job)


class StudyPlatformDecisionsView(_JobView):
    permission_model = Decision
    kind, input_class, spend_what = "platform_decide", s.DecideInput, "Sending decisions"

    @extend_schema(operation_id="study_platform_decisions", responses={200: s.DecisionSerializer(many=True),
                                                                       **ERRORS}, tags=["platforms"],
                   description="The decisions sent (or being sent) for this study, with the platform's answers.")
    def get(self, request: Request, slug: str) -> Response:
        platform_study = platform_study_get(study=study_get(slug=slug))
        rows = Decision.objects.filter(platform_study=platform_study).select_related("submission")
        return _people_door(request, platform_study, s.DecisionSerializer(rows, many=True).data,
                            [row.worker_id for row in rows], "decisions (workers' raw ids)")

    @extend_schema(operation_id="study_platform_decide", request=s.DecideInput,
                   responses={202: JobAcceptedSchema, **ERRORS}, tags=["platforms"],
                   description="A dry run (the job's result lists exactly the requests) unless apply; rejections "
                               "need confirm_rejections.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyPlatformBonusesView(_JobView):
    permission_model = BonusPayment
    kind, input_class, spend_what = "platform_bonus", s.BonusInput, "Paying bonuses"

    @extend_schema(operation_id="study_platform_ledger", responses={200: s.BonusPaymentSerializer(many=True),
                                                                    **ERRORS}, tags=["platforms"],
                   description="The study's bonus ledger.")
    def get(self, request: Request, slug: str) -> Response:
        platform_study = platform_study_get(study=study_get(slug=slug))
        rows = BonusPayment.objects.filter(platform_study=platform_study).select_related("submission", "bulk")
        return _people_door(request, platform_study, s.BonusPaymentSerializer(rows, many=True).data,
                            [row.worker_id for row in rows], "bonus ledger (workers' raw ids)")

    @extend_schema(operation_id="study_platform_bonus", request=s.BonusInput,
                   responses={202: JobAcceptedSchema, **ERRORS}, tags=["platforms"],
                   description="A dry run of the bonuses unless apply (which writes the ledger rows, then pays).")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


class StudyPlatformMessagesView(_JobView):
    permission_model = PlatformMessage
    kind, input_class, spend_what = "platform_message", s.MessageInput, "Messaging participants"

    @extend_schema(operation_id="study_platform_messages", responses={200: s.PlatformMessageSerializer(many=True),
                                                                      **ERRORS}, tags=["platforms"],
                   description="The messages sent to the study's participants.")
    def get(self, request: Request, slug: str) -> Response:
        platform_study = platform_study_get(study=study_get(slug=slug))
        rows = PlatformMessage.objects.filter(platform_study=platform_study)
        return _people_door(request, platform_study, s.PlatformMessageSerializer(rows, many=True).data,
                            [worker for row in rows for worker in row.recipients], "messages (recipients' raw ids)")

    @extend_schema(operation_id="study_platform_message", request=s.MessageInput,
                   responses={202: JobAcceptedSchema, **ERRORS}, tags=["platforms"],
                   description="A dry run of the message unless apply.")
    def post(self, request: Request, slug: str) -> Response:
        return super().post(request, slug)


def _capped_body(request: Request) -> bytes:
    """The body, read no further than the webhook cap + 1 byte (a declared length over the cap is refused unread),
    so a large body costs neither memory nor a signature computation."""
    cap = settings.PLATFORM_WEBHOOK_MAX_BODY_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > cap:
        raise webhook_body_too_large(declared)
    return request._request.read(cap + 1)


class ProlificWebhookView(APIView):
    """Prolific's deliveries (no login: the signature is the credential). Answers at once; the work is in Celery."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]

    @extend_schema(operation_id="platform_hook_prolific", request=OpenApiTypes.OBJECT,
                   responses={200: OpenApiTypes.OBJECT, 400: ErrorSerializer, 403: ErrorSerializer,
                              413: ErrorSerializer},
                   tags=["platforms"], description="Signed with X-Prolific-Request-Signature (base64 HMAC-SHA256 of "
                                                   "timestamp + body); each signed delivery is recorded once, "
                                                   "whatever X-Event-ID it carries. Bodies over "
                                                   "PLATFORM_WEBHOOK_MAX_BODY_BYTES: 413, unread.")
    def post(self, request: Request, name: str) -> Response:
        headers = {key: request.headers.get(key, "") for key in
                   ("X-Prolific-Request-Signature", "X-Prolific-Request-Timestamp", "X-Event-ID")}
        event, created = webhook_receive(account_name=name, headers=headers, body=_capped_body(request))
        return Response({"received": True, "duplicate": not created})
