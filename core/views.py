from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.job_links import job_attention, job_made, job_next_step
from core.job_waiting import job_waiting
from core.models import Job


def job_body(job: Job) -> dict:
    return {
        "id": job.pk, "kind": job.kind, "status": job.status, "percent": job.percent, "done": job.progress_done,
        "total": job.progress_total, "message": job.message, "error": job.error, "result": job.result,
        "waiting": job_waiting(job), "attention": job_attention(job), "made": job_made(job),
        "next_step": job_next_step(job),
    }


JobSchema = inline_serializer("Job", {
    "id": serializers.IntegerField(), "kind": serializers.CharField(),
    "status": serializers.ChoiceField(choices=Job.Status.choices, help_text=(
        "created, running, then one of done, attention (done, but an outcome needs a person: see `attention`) or "
        "failed; the last three are final.")),
    "percent": serializers.FloatField(), "done": serializers.IntegerField(), "total": serializers.IntegerField(),
    "message": serializers.CharField(), "error": serializers.CharField(), "result": serializers.JSONField(),
    "waiting": inline_serializer("JobWaiting", {
        "seconds": serializers.IntegerField(), "queue": serializers.CharField(),
        "workers": serializers.IntegerField(allow_null=True, help_text="Running workers serving the queue (null: "
                                                                       "the broker did not answer)."),
        "command": serializers.CharField(help_text="The worker command that serves the queue."),
        "one_machine_command": serializers.CharField(help_text="The worker command that serves every queue."),
        "text": serializers.CharField(),
    }, allow_null=True, help_text="Set while no worker has taken the job for a few seconds; null otherwise."),
    "attention": inline_serializer("JobAttention", {
        "reason": serializers.CharField(help_text="What a person must check (e.g. a pay call whose outcome is "
                                                  "unknown)."),
        "url": serializers.CharField(help_text="The admin page where it is resolved (e.g. the bonus ledger)."),
        "label": serializers.CharField(),
    }, allow_null=True, help_text='Set when status is "attention"; null otherwise.'),
    "made": inline_serializer("JobMade", {
        "what": serializers.CharField(), "name": serializers.CharField(), "url": serializers.CharField()},
        many=True, help_text="The records the job made, by name, with their admin pages."),
    "next_step": inline_serializer("JobNextStep", {
        "url": serializers.CharField(help_text="The admin page of the step."), "label": serializers.CharField()},
        allow_null=True, help_text="The step that follows a job that is done; null otherwise."),
})

# The one 202 body: the job's status row under "job"; a job that fills a record (agreement run, score run, metric
# evaluation) has the record's fields beside it.
JobAcceptedSchema = inline_serializer("JobAccepted", {"job": JobSchema})


def job_accepted_schema(record: str, schema: Any = OpenApiTypes.OBJECT) -> OpenApiResponse:
    """The 202 of a job that fills a record: `schema` is the record's body, with the job under "job"."""
    return OpenApiResponse(schema, description=f'Queued: the job\'s status row under "job" (as GET '
                                               f'/api/v1/jobs/<id>/), the {record}\'s fields beside it.')


def job_accepted(job: Job, /, **record: Any) -> Response:
    """The 202 of every API view that queues a job (see JobAcceptedSchema)."""
    job.refresh_from_db()
    return Response({**record, "job": job_body(job)}, status=status.HTTP_202_ACCEPTED)


class JobDetailView(APIView):
    """A background job's status row; the admin's progress bars poll it."""

    permission_model = Job

    @extend_schema(responses=JobSchema)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(job_body(get_object_or_404(Job, pk=job_id)))
