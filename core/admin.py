from django.contrib import admin
from django.utils.html import format_html

from core.models import Job


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "progress_bar", "created_by", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    readonly_fields = ["kind", "status", "progress_bar", "params", "result", "error", "message", "celery_task_id",
                       "attempts", "created_by", "created_at", "started_at", "finished_at"]
    exclude = ["progress_done", "progress_total"]
    change_form_template = "admin/core/job_change_form.html"

    @admin.display(description="progress")
    def progress_bar(self, obj: Job) -> str:
        return format_html(
            '<progress class="job-progress" data-job="{}" max="100" value="{}"></progress> '
            '<span class="job-percent" data-job="{}">{}%</span>', obj.pk, obj.percent, obj.pk, obj.percent,
        )

    def has_add_permission(self, request) -> bool:
        return False
