"""The study admin's setup pages: create a study as create_study does (a draft), preview a few items as a
participant sees them, copy the platform links, open it (draft → active, only with items)."""
from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.forms import KIND_TITLES, STUDY_KINDS, StudyCreateForm
from annotation.models import ORDERING_KINDS, ItemKind, Study
from annotation.services.participation import accepted_platforms
from annotation.services.study_build import study_build
from annotation.services.study_language import study_language_warnings
from annotation.services.study_setup import study_close, study_open, study_participant_links, study_preview
from annotation.views import participant_page, timing
from core.errors import ApplicationError
from core.permissions import user_may
from tasks.models import ScreeningQuestion
from tasks.services.screening import screening_questions_load_published

PLATFORM_TITLES = {"prolific": "Prolific", "mturk": "MTurk", "anonymous": "the open link"}
PLATFORM_LABELS = {
    "prolific": "Prolific study URL (Prolific fills in the participant, study and session ids)",
    "mturk": "MTurk ExternalQuestion URL (MTurk adds workerId, assignmentId and hitId)",
    "anonymous": "Open link for anyone (no platform)",
}


def kind_summary(study: Study) -> list[str]:
    """What the study asks of whom, in the terms of its kind (no "m of k" for a kind without correct answers)."""
    k = study.annotators_per_item
    batch = f"{study.items_per_batch} items per batch"
    if study.item_kind in ORDERING_KINDS:
        kind = study.get_item_kind_display().capitalize()
        lines = [f"{kind} ordering items; k = {k} people answer each item, and an instance is validated when at "
                 f"least m = {study.min_correct} of them pick its answer",
                 f"{batch} and {study.screening_per_batch} screening question"
                 f"{'' if study.screening_per_batch == 1 else 's'} per batch"]
    elif study.item_kind == ItemKind.REWRITE:
        lines = [f"Rewrite study; k = {k} rewrites per source text (a rejected rewrite reopens its slot)",
                 f"{batch}; rewrites of at least {study.rewrite_min_length} characters"]
    elif study.item_kind == ItemKind.LIKERT:
        questions = ", ".join(q.get("text", q["name"]) for q in study.questions) or "no questions"
        lines = [f"Likert rating study; k = {k} ratings per item", f"{batch}; questions: {questions}"]
    else:
        lines = [f"Ranking study; k = {k} people rank each item's outputs", batch]
    lines.append(f"at most {study.max_batches_per_participant} batch"
                 f"{'' if study.max_batches_per_participant == 1 else 'es'} per participant, "
                 f"{study.batch_time_limit_minutes} minutes per batch")
    return lines


class StudySetupAdminMixin:
    """Mixed into StudyAdmin (a ModelAdmin)."""

    def get_urls(self) -> list:
        view = self.admin_site.admin_view
        return [
            path("create/", view(self.create_view), name="annotation_study_create"),
            path("create/<slug:kind>/", view(self.create_kind_view), name="annotation_study_create_kind"),
            path("<int:pk>/preview/", view(self.preview_view), name="annotation_study_preview"),
            path("<int:pk>/preview/<slug:platform>/", view(self.participant_preview_view),
                 name="annotation_study_participant_preview"),
            path("<int:pk>/open/", view(self.open_view), name="annotation_study_open"),
            *super().get_urls(),
        ]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        return HttpResponseRedirect(reverse("admin:annotation_study_create"))

    def create_view(self, request: HttpRequest) -> HttpResponse:
        """The kind chooser (a sentence each); a POST naming its kind (the older one-form door) is still taken."""
        if not self.has_add_permission(request):
            raise PermissionDenied("You need the permission to add studies.")
        if request.method == "POST":
            return self._create(request, kind=None)
        kinds = [{"name": name, "title": title, "sentence": sentence,
                  "url": reverse("admin:annotation_study_create_kind", args=[name])}
                 for name, title, sentence in STUDY_KINDS]
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "kinds": kinds,
                   "title": "Create a study: choose its kind"}
        return TemplateResponse(request, "admin/annotation/study_create_kind.html", context)

    def create_kind_view(self, request: HttpRequest, kind: str) -> HttpResponse:
        """The form of one kind: its fields only (annotation.forms.field_kinds), its defaults, then its preview."""
        if not self.has_add_permission(request):
            raise PermissionDenied("You need the permission to add studies.")
        if kind not in KIND_TITLES:
            raise Http404(f"No study kind {kind!r}: choose one of {', '.join(KIND_TITLES)}.")
        return self._create(request, kind=kind)

    def _create(self, request: HttpRequest, *, kind: str | None) -> HttpResponse:
        form = StudyCreateForm(request.POST or None, request.FILES or None, kind=kind)
        if request.method == "POST" and form.is_valid():
            try:
                with transaction.atomic():  # a refused study leaves nothing behind, loaded questions included
                    loaded = self._load_screening(request, form)
                    built = study_build(**form.build_kwargs(), study_status=Study.Status.DRAFT)
            except ApplicationError as exc:
                form.add_error(form.error_field(exc), exc.message)
            else:
                study = built.study
                if loaded:
                    messages.info(request, loaded)
                extra = "".join([f", {built.practice_items} practice items" if built.practice_items else "",
                                 f" (sampling plan: {built.sampling_plan['total']} instances)"
                                 if built.sampling_plan else ""])
                messages.info(request, f"Study '{study.slug}' created as a draft with {study.items.count()} "
                                       f"items{extra}: check the preview, then open it.")
                return HttpResponseRedirect(reverse("admin:annotation_study_preview", args=[study.pk]))
        context = {**self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
                   "kind": kind, "kind_sentence": dict((n, t) for n, _, t in STUDY_KINDS).get(kind or ""),
                   "chooser": reverse("admin:annotation_study_create"),
                   "title": f"Create a study: {KIND_TITLES[kind]}" if kind else "Create a study"}
        return TemplateResponse(request, "admin/annotation/study_create.html", context)

    def _load_screening(self, request: HttpRequest, form: StudyCreateForm) -> str:
        """The form's "Load STEL's screening questions" box: the screening questions page's button, inline."""
        if not form.cleaned_data.get("load_stel_screening"):
            return ""
        if not user_may(request.user, ScreeningQuestion, "add"):
            raise ApplicationError("Load STEL's screening questions: you need the permission to add screening "
                                   "questions.", field="load_stel_screening")
        result = screening_questions_load_published()
        return (f"Loaded {len(result['created'])} of STEL's published screening questions "
                f"({result['published']} in all; their answers are public: for demos and pilots).")

    def preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The setup page: what the study is, the links and codes for the platforms it accepts, and the participant's
        own page in preview mode (one frame, one tab per accepted platform)."""
        study = get_object_or_404(Study, pk=pk)
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        platforms = accepted_platforms(study)
        links = self._links(request, study)
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "study": study,
            "title": f"Preview: {study.slug}", "summary": kind_summary(study), "n_items": study.items.count(),
            "platforms": [{"name": name, "title": PLATFORM_TITLES[name], "label": PLATFORM_LABELS[name],
                           "link": links[name],
                           "preview": reverse("admin:annotation_study_participant_preview", args=[study.pk, name])}
                          for name in platforms],
            "prolific": "prolific" in platforms, "mturk": "mturk" in platforms,
            "timing": timing(study), "language_warnings": study_language_warnings(study=study),
            "can_open": self.has_change_permission(request, study) and study.status != Study.Status.ACTIVE,
        }
        return TemplateResponse(request, "admin/annotation/study_preview.html", context)

    def participant_preview_view(self, request: HttpRequest, pk: int, platform: str) -> HttpResponse:
        """The participant's page itself, as a participant from `platform` sees it, in preview mode: the browser
        plays the session and nothing is stored (study_setup.study_preview)."""
        study = get_object_or_404(Study, pk=pk)
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        try:
            preview = study_preview(study=study, platform=platform)
        except ApplicationError as exc:
            raise Http404(exc.message) from None
        who = {"platform": platform, "participant": "", "study_ref": "", "session_ref": ""}
        response = participant_page(request, study, who=who, query={}, preview=preview)
        response["X-Frame-Options"] = "SAMEORIGIN"  # shown in a frame of the setup page
        return response

    def open_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        study = get_object_or_404(Study, pk=pk)
        if not self.has_change_permission(request, study):
            raise PermissionDenied("You need the permission to change studies.")
        target = reverse("admin:annotation_study_preview", args=[study.pk])
        if request.method != "POST":
            return HttpResponseRedirect(target)
        try:
            study_open(study=study)
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Study '{study.slug}' is open to participants.")
        return HttpResponseRedirect(target)

    @admin.action(description="Open to participants (studies with items only)", permissions=["change"])
    def open_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            try:
                study_open(study=study)
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"Study '{study.slug}' is open.", messages.SUCCESS)

    @admin.action(description="Close study (no new sessions; open sessions end now; retention starts)",
                  permissions=["change"])
    def close_studies(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            result = study_close(study=study)
            if result["already_closed"]:
                self.message_user(request, f"Study '{study.slug}' was closed already.", messages.WARNING)
            else:
                self.message_user(request, f"Study '{study.slug}' is closed ({result['sessions_ended']} open "
                                           "session(s) ended).", messages.SUCCESS)

    def _links(self, request: HttpRequest, study: Study) -> dict[str, str]:
        return study_participant_links(study=study, base_url=request.build_absolute_uri("/"))

    @admin.display(description="participant links")
    def participant_links(self, obj: Study) -> str:
        if not obj.pk:
            return "–"
        preview = reverse("admin:annotation_study_preview", args=[obj.pk])
        return format_html('<a href="{}">preview and participant links</a>', preview)
