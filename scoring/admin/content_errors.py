"""The researcher's review of generated content errors (accept / reject) and the rating study made from them."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from core.errors import ApplicationError
from scoring.content_errors.services import content_error_study_create, content_errors_review
from scoring.models import ContentError, ContentErrorSet


@admin.register(ContentErrorSet)
class ContentErrorSetAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "generator", "seed", "summary", "study", "created_at"]
    readonly_fields = ["name", "source", "error_types", "generator", "seed", "summary", "study", "created_by",
                       "created_at"]
    actions = ["create_rating_study"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # sets are built by the build_content_errors command (rules or a local model)

    @admin.action(description="Create the rating study (Pauli's scales) from the accepted errors",
                  permissions=["change"])
    def create_rating_study(self, request: HttpRequest, queryset: QuerySet[ContentErrorSet]) -> None:
        for error_set in queryset:
            try:
                study = content_error_study_create(error_set=error_set, slug=f"{error_set.name}-rating"[:80])
            except ApplicationError as exc:
                self.message_user(request, f"{error_set.name}: {exc.message}", level=messages.ERROR)
            else:
                self.message_user(request, f"{error_set.name}: study {study.slug} created with "
                                           f"{study.items.count()} items.")


@admin.register(ContentError)
class ContentErrorAdmin(admin.ModelAdmin):
    list_display = ["pair_id", "error_type", "rule", "shown_edit", "review", "reviewed_by", "error_set"]
    list_filter = ["review", "error_type", "error_set"]
    search_fields = ["pair_id", "rewrite", "erroneous"]
    readonly_fields = ["error_set", "pair_id", "source", "rewrite", "erroneous", "target_style", "error_type", "rule",
                       "edit", "review", "reviewed_by", "reviewed_at"]
    actions = ["accept", "reject", "reset"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="edit")
    def shown_edit(self, obj: ContentError) -> str:
        return format_html("<del>{}</del> → <ins>{}</ins><br><small>{}</small>", obj.edit.get("before", ""),
                           obj.edit.get("after", ""), obj.erroneous)

    def _review(self, request: HttpRequest, queryset: QuerySet[ContentError], decision: str) -> None:
        count = content_errors_review(error_ids=list(queryset.values_list("pk", flat=True)), decision=decision,
                                      reviewer=request.user.get_username())
        self.message_user(request, f"{count} content error(s) marked {decision}.")

    @admin.action(description="Accept the selected errors (they go to raters)", permissions=["change"])
    def accept(self, request: HttpRequest, queryset: QuerySet[ContentError]) -> None:
        self._review(request, queryset, ContentError.Review.ACCEPTED)

    @admin.action(description="Reject the selected errors", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[ContentError]) -> None:
        self._review(request, queryset, ContentError.Review.REJECTED)

    @admin.action(description="Back to pending review", permissions=["change"])
    def reset(self, request: HttpRequest, queryset: QuerySet[ContentError]) -> None:
        self._review(request, queryset, ContentError.Review.PENDING)
