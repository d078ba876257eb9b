from collections.abc import Callable
from typing import Any

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from core.models import Job

# django-axes' "Clean up expired attempts" reads the attempt time its login handler sets on a request, which an admin
# action's request never has (an AttributeError: a 500): the action again, with that time set and the delete
# permission it needs, since it deletes rows.
admin.site.unregister(AccessAttempt)


@admin.register(AccessAttempt)
class LoginAttemptAdmin(AccessAttemptAdmin):
    actions = ["cleanup_expired_attempts"]

    @admin.action(description="Clean up expired attempts", permissions=["delete"])
    def cleanup_expired_attempts(self, request, queryset):  # noqa: ANN001, ANN201 - axes' signature
        request.axes_attempt_time = timezone.now()
        return super().cleanup_expired_attempts(request, queryset)


def job_message(prefix: str, job: Job) -> str:
    """A message that links to the job's page (progress, result, and what it made)."""
    return format_html('{} <a href="{}">job #{}</a>.', prefix, reverse("admin:core_job_change", args=[job.pk]),
                       job.pk)


# result key → (admin URL name, label) of the record a job made
MADE = {
    "corpus_id": ("admin:tasks_corpus_change", "corpus"),
    "generation_run_id": ("admin:tasks_generationrun_change", "generation run"),
    "agreement_run": ("admin:scoring_agreement_dashboard", "agreement dashboard"),
    "filter_run": ("admin:scoring_filterrun_change", "filter run"),
    "export": ("admin:scoring_benchmarkexport_change", "export"),
    "score_run": ("admin:scoring_scorerun_change", "score run"),
    "evaluation": ("admin:scoring_metricevaluation_change", "metric evaluation"),
    "study_id": ("admin:annotation_study_change", "study"),
}


# job kind → what its page shows under the fields once it is done (e.g. an export's card and downloads). Apps register
# here (core imports no app); the function gets the job and the user, and returns HTML or None.
JOB_PANELS: dict[str, Callable[..., Any]] = {}


def job_panel_register(kind: str, panel: Callable[..., Any]) -> None:
    JOB_PANELS[kind] = panel


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "progress_bar", "created_by", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    readonly_fields = ["kind", "status", "progress_bar", "made", "error", "message", "params", "result",
                       "celery_task_id", "attempts", "created_by", "created_at", "started_at", "finished_at"]
    exclude = ["progress_done", "progress_total"]
    change_form_template = "admin/job_polling_change_form.html"

    @admin.display(description="progress")
    def progress_bar(self, obj: Job) -> str:
        return format_html(
            '<progress class="job-progress" data-job="{}" max="100" value="{}"></progress> '
            '<span class="job-percent" data-job="{}" data-job-poll="{}" data-job-status="{}">{}%</span>',
            obj.pk, obj.percent, obj.pk, reverse("job-detail", args=[obj.pk]), obj.status, obj.percent,
        )

    @admin.display(description="made")
    def made(self, obj: Job) -> str:
        """Links to what the job made, by the keys its result names (URL names only: core imports no app)."""
        links = []
        made = {**MADE, "id": ("admin:scoring_scorerun_change", "score run")} if obj.kind == "score_stel" else MADE
        for key, (url_name, label) in made.items():
            value = (obj.result or {}).get(key)
            if isinstance(value, int):
                try:
                    links.append((reverse(url_name, args=[value]), f"{label} #{value}"))
                except NoReverseMatch:
                    continue
        if not links:
            return "–"
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def change_view(self, request, object_id, form_url="", extra_context=None):  # noqa: ANN001, ANN201
        job = Job.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        panel = JOB_PANELS.get(job.kind) if job is not None and job.status == Job.Status.DONE else None
        extra_context = {**(extra_context or {}),
                         "job_panel": panel(job=job, user=request.user) if panel else None}
        return super().change_view(request, object_id, form_url, extra_context)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a status row: shown, never edited (the page is "View job", without Save)
