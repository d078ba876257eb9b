from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404

from core.models import Job


@staff_member_required
def job_detail(request: HttpRequest, job_id: int) -> JsonResponse:
    """Polled by the admin's progress bars."""
    job = get_object_or_404(Job, pk=job_id)
    return JsonResponse({
        "id": job.pk, "kind": job.kind, "status": job.status, "percent": job.percent,
        "done": job.progress_done, "total": job.progress_total, "message": job.message,
        "error": job.error, "result": job.result,
    })
