"""What the scoring admins share: computations are read-only records, started from a form of their own."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString

from core.admin import job_message, job_waiting_html  # noqa: F401 - the scoring admins import job_message here
from core.erasure import computed_before_text
from core.errors import ApplicationError
from scoring.erasures import record_erasures_since


class ComputationRecordAdmin(admin.ModelAdmin):
    """A record of a computation: never edited; "add" goes to the start form at `<app>_<model>_start`."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def start_url_name(self) -> str:
        return f"{self.model._meta.app_label}_{self.model._meta.model_name}_start"

    # The start form: a subclass names its form (with `service_kwargs()`), the service that starts the
    # computation, the page's title and template, and the message once it is queued.
    start_form_class: type[forms.Form]
    start_title: str
    start_template: str

    def start_record(self, **kwargs: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def start_message(self, record: Any) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def start_initial(self, request: HttpRequest) -> dict[str, Any] | None:
        return None

    def start_redirect_url(self, record: Any) -> str:
        opts = self.model._meta
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[record.pk])

    def start_return_url(self, request: HttpRequest) -> str | None:
        """`?next=` of a start form opened from another page (the study's dashboard): where to return once the job
        is queued, when it is a page of this site's admin."""
        target = request.GET.get("next") or ""
        admin_root = reverse("admin:index")
        if target.startswith(admin_root) and url_has_allowed_host_and_scheme(
                target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            return target
        return None

    def start_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied(f"You need the permission to add {self.model._meta.verbose_name_plural}.")
        form = self.start_form_class(request.POST or None, initial=self.start_initial(request))
        if request.method == "POST" and form.is_valid():
            try:
                record = self.start_record(**form.service_kwargs(), created_by=request.user.get_username())
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.info(request, self.start_message(record))
                return HttpResponseRedirect(self.start_return_url(request) or self.start_redirect_url(record))
        context = {**self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
                   "title": self.start_title, **self.start_context(form)}
        return TemplateResponse(request, self.start_template, context)

    def start_context(self, form: Any) -> dict[str, Any]:
        """What a start page shows besides its form (a subclass's own facts)."""
        return {}

    def get_urls(self) -> list:
        return [path("start/", self.admin_site.admin_view(self.start_view), name=self.start_url_name()),
                *super().get_urls()]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        return HttpResponseRedirect(reverse(f"admin:{self.start_url_name()}"))

    def job_status(self, obj: Any) -> SafeString:
        """A record not computed yet: not started, failed with its error, or a progress bar the page polls."""
        if obj.job is None:
            return format_html("not started")
        if obj.job.status == obj.job.Status.FAILED:
            return format_html('<span class="errornote">failed: {}</span>', obj.job.error[-500:])
        # data-job-poll: core/static/core/job_poll.js updates the bar and reloads the page when the job ends.
        return format_html('<progress class="job-progress" max="100" value="{}"></progress> <span '
                           'class="job-percent" data-job="{}" data-job-poll="{}" data-job-status="{}">{}% {}</span>{}',
                           obj.job.percent, obj.job.pk, reverse("job-detail", args=[obj.job.pk]), obj.job.status,
                           obj.job.percent, obj.job.status, job_waiting_html(obj.job))


def erasures_cell(record: Any) -> str:
    """The admin's "erasures since" cell and field: "computed before n erasures", or a dash."""
    return computed_before_text(record_erasures_since(record)) or "—"
