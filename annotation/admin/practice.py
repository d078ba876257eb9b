"""Admin for practice items (annotation/services/practice.py): researchers add, edit and order them per study."""
from __future__ import annotations

from django.contrib import admin

from annotation.models import PracticeAnswer, PracticeItem
from core.admin import PersonalDataAdminMixin


@admin.register(PracticeItem)
class PracticeItemAdmin(admin.ModelAdmin):
    list_display = ["study", "position", "anchor_1", "correct_answer"]
    list_filter = ["study"]
    ordering = ["study", "position"]


@admin.register(PracticeAnswer)
class PracticeAnswerAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    person_paths = ("participant__platform", "participant__external_id")
    raw_fields = ("participant",)
    personal_data_what = "practice answers"
    list_display = ["item", "participant", "answer", "is_correct", "answered_at"]
    list_filter = ["item__study", "is_correct"]
    readonly_fields = ["item", "participant", "answer", "is_correct", "answered_at"]

    def has_add_permission(self, request) -> bool:  # noqa: ANN001 - answers come from participants only
        return False
