"""Admin for reviewing number-substitution candidates: translate them, accept or reject, build a corpus.

Imported from tasks/admin/__init__.py. The actions only parse input and call the services in
tasks.services.number_substitutions.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.utils.text import Truncator

from core.errors import ApplicationError
from tasks.models import NumberSubstitutionCandidate
from tasks.services.number_substitutions import nsubs_candidates_set_status, nsubs_corpus_build

BUILD_FORM_TEMPLATE = """{% extends "admin/base_site.html" %}
{% block content %}
<h1>Build an nbr_substitution corpus</h1>
<p>{{ n_accepted }} of the {{ n_selected }} selected candidates are accepted and become pairs
(plain = translation, substituted = original text).</p>
<form method="post">{% csrf_token %}
  {{ form.as_p }}
  {% for id in ids %}<input type="hidden" name="_selected_action" value="{{ id }}">{% endfor %}
  <input type="hidden" name="action" value="build_corpus">
  <input type="hidden" name="apply" value="1">
  <input type="submit" value="Build corpus">
</form>
{% endblock %}
"""


class BuildCorpusForm(forms.Form):
    name = forms.CharField(max_length=128, help_text="Name of the new corpus.")
    replace = forms.BooleanField(required=False, help_text="Overwrite a corpus of the same name.")


@admin.register(NumberSubstitutionCandidate)
class NumberSubstitutionCandidateAdmin(admin.ModelAdmin):
    list_display = ["id", "short_text", "tokens", "translation", "status", "source_name", "line_number"]
    list_display_links = ["id"]
    list_editable = ["translation", "status"]
    list_filter = ["status", "source_file"]
    search_fields = ["text", "translation"]
    readonly_fields = ["text", "matched_tokens", "source_file", "line_number", "created_at"]
    fields = ["text", "matched_tokens", "translation", "status", "source_file", "line_number", "created_at"]
    actions = ["accept", "reject", "build_corpus"]

    def get_changelist_form(self, request: HttpRequest, **kwargs: object) -> type[forms.ModelForm]:
        # A one-line input keeps the changelist readable; the full text area is on the change page.
        kwargs["widgets"] = {"translation": forms.TextInput(attrs={"size": 60})}
        return super().get_changelist_form(request, **kwargs)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # candidates come from find_number_substitutions --load

    @admin.display(description="text")
    def short_text(self, obj: NumberSubstitutionCandidate) -> str:
        return Truncator(obj.text).chars(90)

    @admin.display(description="matched")
    def tokens(self, obj: NumberSubstitutionCandidate) -> str:
        return " ".join(m.get("token", "") for m in obj.matched_tokens if isinstance(m, dict))

    @admin.display(description="file", ordering="source_file")
    def source_name(self, obj: NumberSubstitutionCandidate) -> str:
        return obj.source_file.rsplit("/", 1)[-1]

    def _set_status(self, request: HttpRequest, queryset: QuerySet, status: str) -> None:
        try:
            count = nsubs_candidates_set_status(ids=queryset.values_list("pk", flat=True), status=status)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        self.message_user(request, f"{count} candidate(s) marked {status}.", messages.SUCCESS)

    @admin.action(description="Accept selected candidates (each needs a translation)", permissions=["change"])
    def accept(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_status(request, queryset, NumberSubstitutionCandidate.Status.ACCEPTED)

    @admin.action(description="Reject selected candidates", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_status(request, queryset, NumberSubstitutionCandidate.Status.REJECTED)

    @admin.action(description="Build an nbr_substitution corpus from the selected accepted candidates",
                  permissions=["change"])
    def build_corpus(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        ids = list(queryset.values_list("pk", flat=True))
        form = BuildCorpusForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            try:
                corpus = nsubs_corpus_build(name=form.cleaned_data["name"], ids=ids,
                                            replace=form.cleaned_data["replace"])
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                return None
            self.message_user(
                request, f"Corpus '{corpus.name}' created with {corpus.n_pairs} pairs.", messages.SUCCESS
            )
            return None
        context = {
            **self.admin_site.each_context(request), "title": "Build an nbr_substitution corpus", "form": form,
            "ids": ids, "n_selected": len(ids), "opts": self.model._meta,
            "n_accepted": queryset.filter(status=NumberSubstitutionCandidate.Status.ACCEPTED).count(),
        }
        template = engines["django"].from_string(BUILD_FORM_TEMPLATE)
        return HttpResponse(template.render(context, request))
