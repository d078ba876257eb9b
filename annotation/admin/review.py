"""The review queue for rewrites: a keyboard-driven admin view over pending rewrites with source
and rewrite side by side (a accept, r + digit reject with a reason, j/k move), per-worker acceptance rates and
blocking. Every door needs the change permission on rewrite reviews; the work is in annotation/services/review.py."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from annotation.models import (
    Participant,
    RejectionReason,
    RewriteReview,
    RewriteSettings,
    Study,
    WorkerBlock,
    WritingSignal,
)
from annotation.services.review import (
    QUEUE_FILTERS,
    review_decide,
    review_queue,
    review_queue_check,
    worker_block,
    worker_rates,
)
from annotation.services.writing_signals.jobs import writing_signals_start
from annotation.services.writing_signals.registry import SPECS, auto_reject_validate, thresholds_validate
from core.admin import PersonalDataAdminMixin, job_message
from core.errors import ApplicationError
from core.json_guard import json_object_read
from core.permissions import user_may
from core.personal_data_doors import personal_data_door
from core.pseudonyms import is_pseudonym, person_key


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
            path("queue/signals/", wrap(require_POST(self.signals_view)), name="annotation_rewritereview_signals"),
            *super().get_urls(),
        ]

    def _check(self, request: HttpRequest) -> None:
        if not self.has_change_permission(request):
            raise PermissionDenied

    def queue_view(self, request: HttpRequest) -> HttpResponse:
        self._check(request)
        slug = request.GET.get("study", "")
        study = Study.objects.filter(slug=slug).first() if slug else None
        show, order = request.GET.get("show", ""), request.GET.get("order", "oldest")
        try:
            review_queue_check(show=show, order=order)
        except ApplicationError as exc:
            messages.error(request, exc.message)
            show, order = "", "oldest"
        rows, workers = review_queue(study=study, show=show, order=order), worker_rates(study=study)
        people = {(w["platform"], w["participant"]) for w in workers}
        people |= {tuple(r["participant"].split(":", 1)) for r in rows}
        rows, workers = personal_data_door(request=request, door="admin", what="review queue (writers)",
                                           body=(rows, workers), people=people, study_slug=slug)
        context = {
            **self.admin_site.each_context(request), "title": "Review rewrites", "opts": self.model._meta,
            "rows": rows, "workers": workers,
            "study": study, "show": show, "order": order,
            "filters": [*QUEUE_FILTERS.items(), *((name, f"flagged: {spec.label}") for name, spec in SPECS.items())],
            "orders": [("oldest", "blocked writers first, then oldest"), ("flags", "most flags first"),
                       *((f"signal:{name}", f"by score: {spec.label}") for name, spec in SPECS.items())],
            "may_compute": user_may(request.user, WritingSignal, "add"),
            "studies": Study.objects.filter(rewrite_settings__isnull=False).order_by("slug"),
            "reasons": [{"key": str(n), "code": c.value, "label": c.label}
                        for n, c in enumerate(RejectionReason, start=1)],
        }
        return TemplateResponse(request, "admin/annotation/rewritereview/queue.html", context)

    def decide_view(self, request: HttpRequest) -> JsonResponse:
        self._check(request)
        try:
            body = json_object_read(request.body, shape="{response, decision, reason, reason_text}")
            review = review_decide(response_id=int(body.get("response") or 0), decision=str(body.get("decision")),
                                   reason=str(body.get("reason") or ""), reason_text=str(body.get("reason_text") or ""),
                                   reviewer=request.user)
        except (TypeError, ValueError):
            return _error(ApplicationError("response must be a rewrite id.", details={"response": ["integer"]}))
        except ApplicationError as exc:
            return _error(exc)
        return JsonResponse({"response": review.response_id, "status": review.status, "reason": review.reason,
                             "reviewer": request.user.get_username()})

    def signals_view(self, request: HttpRequest) -> HttpResponse:
        """Start measuring a study's writing signals (and applying its auto-reject rule) as a job; with a model
        endpoint given, the similarity to the model's own rewrites too."""
        if not user_may(request.user, WritingSignal, "add"):
            raise PermissionDenied
        slug = request.POST.get("study", "")
        back = reverse("admin:annotation_rewritereview_queue") + (f"?study={slug}" if slug else "")
        try:
            job = writing_signals_start(
                study_slug=slug, rewrite_model_url=request.POST.get("rewrite_model_url") or None,
                rewrite_model=request.POST.get("rewrite_model") or None,
                api_key_env=request.POST.get("api_key_env") or None, created_by=request.user.get_username(),
                check_paths=True)
        except ApplicationError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(back)
        messages.info(request, job_message(f"Writing signals of '{slug}' queued as", job))
        return HttpResponseRedirect(back)

    def block_view(self, request: HttpRequest) -> HttpResponse:
        self._check(request)
        worker = request.POST.get("worker", "")
        platform, _, external_id = worker.partition(":")
        if is_pseudonym(external_id):  # the queue shows pseudonyms to reviewers without the personal-data permission
            external_id = next((raw for raw in Participant.objects.filter(platform=platform).values_list(
                "external_id", flat=True).distinct()
                if person_key(platform=platform, external_id=raw) == external_id), external_id)
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


class RewriteSettingsForm(forms.ModelForm):
    """The writing signals' thresholds and auto-reject rule are checked as every other door checks them."""

    class Meta:
        model = RewriteSettings
        fields = "__all__"

    def clean_signal_thresholds(self) -> dict[str, Any]:
        try:
            return thresholds_validate(self.cleaned_data.get("signal_thresholds"))
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_signal_auto_reject(self) -> list[str]:
        try:
            return auto_reject_validate(self.cleaned_data.get("signal_auto_reject"))
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from None


@admin.register(RewriteSettings)
class RewriteSettingsAdmin(admin.ModelAdmin):
    form = RewriteSettingsForm
    list_display = ["study", "target_style", "max_length", "copy_threshold", "qualification_min_accepted",
                    "qualification_min_rate", "signal_auto_reject"]


@admin.register(WritingSignal)
class WritingSignalAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    """Read-only: signals are measured by the writing-signals job, never typed in."""

    person_paths = ("response__participant__platform", "response__participant__external_id")
    withheld_fields = ("details",)  # measured from the writer's telemetry
    personal_data_what = "writing signals"

    list_display = ["response", "signal", "score", "threshold", "flagged", "evidence", "computed_at"]
    list_filter = ["signal", "flagged", "response__study"]
    readonly_fields = ["response", "signal", "score", "threshold", "flagged", "evidence", "details", "computed_at"]

    def people_on_page(self, objects: list[Any], page: str) -> list[tuple[str, str]]:
        return [] if page == "list" else super().people_on_page(objects, page)  # the list shows no telemetry

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class WorkerBlockForm(forms.ModelForm):
    """A block names the platform the person came by: one of the platforms, not free text (a typo would block no
    one)."""

    platform = forms.ChoiceField(choices=Participant.Platform.choices,
                                 help_text="Where the person comes from: their id is that platform's id.")

    class Meta:
        model = WorkerBlock
        fields = ["platform", "external_id", "reason"]


@admin.register(WorkerBlock)
class WorkerBlockAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    form = WorkerBlockForm
    raw_fields = ("external_id",)
    personal_data_what = "blocked writers"

    list_display = ["platform", "external_id", "reason", "blocked_by", "created_at"]
