"""What the scoring admins share: computations are read-only records, started from a form of their own."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString


class ComputationRecordAdmin(admin.ModelAdmin):
    """A record of a computation: never edited; "add" goes to the start form at `<app>_<model>_start`."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def start_url_name(self) -> str:
        return f"{self.model._meta.app_label}_{self.model._meta.model_name}_start"

    def start_view(self, request: HttpRequest) -> HttpResponse:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_urls(self) -> list:
        return [path("start/", self.admin_site.admin_view(self.start_view), name=self.start_url_name()),
                *super().get_urls()]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        return HttpResponseRedirect(reverse(f"admin:{self.start_url_name()}"))

    def job_status(self, obj: Any) -> SafeString:
        """A record not computed yet: not started, failed with its error, or a progress bar the page polls."""
        if obj.job is None:
            return format_html("not started")
        if obj.job.status == obj.job.Status.FAILED:
            return format_html('<span class="errornote">failed: {}</span>', obj.job.error[-500:])
        return format_html('<progress class="job-progress" max="100" value="{}"></progress> '
                           '<span class="job-percent" data-job="{}">{}% {}</span>',
                           obj.job.percent, obj.job.pk, obj.job.percent, obj.job.status)
