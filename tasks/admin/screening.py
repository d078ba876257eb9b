"""Screening questions in the admin: private questions for real studies, added one by one, imported from a TSV in
STEL's screening format, or duplicated from existing ones to edit."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from core.errors import ApplicationError
from tasks.forms import ScreeningImportForm
from tasks.models import ScreeningQuestion, Setup
from tasks.services.screening import (
    screening_questions_duplicate,
    screening_questions_import,
    screening_questions_load_published,
)

PUBLIC_WARNING = (
    "STEL's published screening questions (named stel-…, loaded by the \"Load STEL's screening questions\" button or "
    "`loaddata screening_questions`) and the demo's "
    "stylecrowd-… questions have public answers: anyone can look them up, so a bot passes them. Use them for demos; "
    "for a real study add private questions here (one by one, or import a TSV in STEL's screening format) and "
    "deactivate the public ones. A study asking for screening questions draws active questions of its own style "
    "components that fit its setup, and cannot be created without enough of them."
)

PUBLIC_WARNING_SHORT = "Their answers are public: use them for demos and pilots, private questions for a paid study."


class ScreeningQuestionForm(forms.ModelForm):
    class Meta:
        model = ScreeningQuestion
        fields = ["name", "component", "anchor_1", "anchor_2", "sentence_1", "sentence_2", "correct_order", "setups",
                  "active", "source", "language"]
        help_texts = {
            "name": "A unique slug, e.g. private-formality-1.",
            "anchor_1": "A1: shown in every setup. Make its style unmistakable.",
            "anchor_2": "A2: A1's content in the other style (shown only in quadruples).",
            "sentence_1": "S1: other content, in one of the two styles.",
            "sentence_2": "S2: S1's content in the other style.",
            "correct_order": "S1-S2 when S1 has the style of A1 (in triples the answer is then S1), else S2-S1.",
            "active": "Only active questions are mixed into batches.",
        }

    def clean_setups(self) -> list[str]:
        setups = self.cleaned_data.get("setups") or []
        if not isinstance(setups, list) or not set(setups) <= set(Setup.values):
            raise forms.ValidationError(f"A list of setups out of {Setup.values}, or [] for every setup.")
        return setups


@admin.register(ScreeningQuestion)
class ScreeningQuestionAdmin(admin.ModelAdmin):
    form = ScreeningQuestionForm
    list_display = ["name", "component", "language", "correct_order", "setups", "active", "source", "anchor_1",
                    "sentence_1"]
    list_filter = ["component", "language", "active"]
    list_editable = ["active"]
    search_fields = ["name", "anchor_1", "anchor_2", "sentence_1", "sentence_2", "source"]
    actions = ["duplicate_as_private"]
    change_list_template = "admin/tasks/screeningquestion_change_list.html"

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        return super().changelist_view(request, {**(extra_context or {}), "public_warning": PUBLIC_WARNING})

    def get_urls(self):
        return [path("import/", self.admin_site.admin_view(self.import_view), name="tasks_screeningquestion_import"),
                path("load-published/", self.admin_site.admin_view(require_POST(self.load_published_view)),
                     name="tasks_screeningquestion_load_published"),
                *super().get_urls()]

    def load_published_view(self, request: HttpRequest) -> HttpResponse:
        """"Load STEL's screening questions": what `loaddata screening_questions` loads, missing ones only."""
        if not self.has_add_permission(request):
            raise PermissionDenied("You need the permission to add screening questions.")
        try:
            result = screening_questions_load_published()
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Loaded {len(result['created'])} of STEL's published screening questions "
                                      f"({result['published']} in all). {PUBLIC_WARNING_SHORT}")
        return HttpResponseRedirect(reverse("admin:tasks_screeningquestion_changelist"))

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            return HttpResponse(status=403)
        form = ScreeningImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            upload = data["file"]
            try:
                text = upload.read().decode("utf-8")
                created = screening_questions_import(text=text, where=upload.name, prefix=data["prefix"],
                                                     source=data["source"], active=data["active"],
                                                     language=data["language"] or "en")
            except UnicodeDecodeError:
                form.add_error("file", f"{upload.name}: not UTF-8 text.")
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                messages.info(request, f"Imported {len(created)} screening question(s): "
                                       f"{', '.join(q.name for q in created)}.")
                return HttpResponseRedirect(reverse("admin:tasks_screeningquestion_changelist"))
        context = {**self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
                   "title": "Import screening questions", "public_warning": PUBLIC_WARNING}
        return TemplateResponse(request, "admin/tasks/screeningquestion_import.html", context)

    @admin.action(description="Duplicate as private (inactive copies to edit)", permissions=["add"])
    def duplicate_as_private(self, request: HttpRequest, queryset: QuerySet[ScreeningQuestion]) -> None:
        copies = screening_questions_duplicate(questions=queryset)
        self.message_user(request, f"Created {len(copies)} inactive cop(ies): {', '.join(q.name for q in copies)}. "
                                   "Change their texts (a copy of a public question is still public), then activate.")
