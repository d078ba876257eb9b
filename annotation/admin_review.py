"""The review queue for rewrites (issue 12, point 2): a keyboard-driven admin view over pending rewrites with source
and rewrite side by side (a accept, r + digit reject with a reason, j/k move), per-worker acceptance rates and
blocking. Every door needs the change permission on rewrite reviews; the work is in annotation/services/review.py."""
from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from annotation.models import Study
from annotation.models_review import RejectionReason, RewriteReview, RewriteSettings, WorkerBlock
from annotation.services.review import review_decide, review_queue, worker_block, worker_rates
from core.errors import ApplicationError


def _error(exc: ApplicationError) -> JsonResponse:
    return JsonResponse({"error": {"code": exc.code, "message": exc.message, "details": exc.details or {}}},
                        status=exc.status)


@admin.register(RewriteReview)
class RewriteReviewAdmin(admin.ModelAdmin):
    list_display = ["response", "status", "reason", "reviewer", "decided_at", "flagged", "shown_to_worker_at"]
    list_filter = ["status", "reason", "flagged", "response__study"]
    # Decisions are made in the queue (review_decide invalidates and releases); the change form only shows them.
    readonly_fields = ["response", "status", "reason", "reason_text", "flagged", "reviewer", "decided_at",
                       "shown_to_worker_at"]
    change_list_template = "admin/annotation/rewritereview/change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # decisions are made in the queue

    def get_urls(self) -> list[Any]:
        wrap = self.admin_site.admin_view
        return [
            path("queue/", wrap(self.queue_view), name="annotation_rewritereview_queue"),
            path("queue/decide/", wrap(require_POST(self.decide_view)), name="annotation_rewritereview_decide"),
            path("queue/block/", wrap(require_POST(self.block_view)), name="annotation_rewritereview_block"),
            *super().get_urls(),
        ]

    def _check(self, request: HttpRequest) -> None:
        if not self.has_change_permission(request):
            raise PermissionDenied

    def queue_view(self, request: HttpRequest) -> HttpResponse:
        self._check(request)
        slug = request.GET.get("study", "")
        study = Study.objects.filter(slug=slug).first() if slug else None
        context = {
            **self.admin_site.each_context(request), "title": "Review rewrites", "opts": self.model._meta,
            "rows": review_queue(study=study), "workers": worker_rates(study=study), "study": study,
            "studies": Study.objects.filter(rewrite_settings__isnull=False).order_by("slug"),
            "reasons": [{"key": str(n), "code": c.value, "label": c.label}
                        for n, c in enumerate(RejectionReason, start=1)],
        }
        return TemplateResponse(request, "admin/annotation/rewritereview/queue.html", context)

    def decide_view(self, request: HttpRequest) -> JsonResponse:
        self._check(request)
        try:
            body = json.loads(request.body or b"{}")
            if not isinstance(body, dict):
                raise ValueError
        except ValueError:
            return _error(ApplicationError("expected a JSON object {response, decision, reason, reason_text}."))
        try:
            review = review_decide(response_id=int(body.get("response") or 0), decision=str(body.get("decision")),
                                   reason=str(body.get("reason") or ""), reason_text=str(body.get("reason_text") or ""),
                                   reviewer=request.user)
        except (TypeError, ValueError):
            return _error(ApplicationError("response must be a rewrite id.", details={"response": ["integer"]}))
        except ApplicationError as exc:
            return _error(exc)
        return JsonResponse({"response": review.response_id, "status": review.status, "reason": review.reason,
                             "reviewer": request.user.get_username()})

    def block_view(self, request: HttpRequest) -> HttpResponse:
        self._check(request)
        worker = request.POST.get("worker", "")
        platform, _, external_id = worker.partition(":")
        try:
            result = worker_block(platform=platform, external_id=external_id,
                                  reason=request.POST.get("reason", "") or "blocked by a reviewer",
                                  blocked_by=request.user)
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Blocked {result['blocked']}; {result['pending_flagged']} pending rewrite(s) "
                                      "flagged.")
        return HttpResponseRedirect(reverse("admin:annotation_rewritereview_queue"))


@admin.register(RewriteSettings)
class RewriteSettingsAdmin(admin.ModelAdmin):
    list_display = ["study", "target_style", "max_length", "copy_threshold", "qualification_min_accepted",
                    "qualification_min_rate"]


@admin.register(WorkerBlock)
class WorkerBlockAdmin(admin.ModelAdmin):
    list_display = ["platform", "external_id", "reason", "blocked_by", "created_at"]
