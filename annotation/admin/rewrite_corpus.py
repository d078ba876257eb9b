"""The admin's door to `build_corpus_from_rewrites`: an action on a rewrite study that asks for the corpus's name,
component, seed and splits on an intermediate page, then calls the same service as the command."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotation.models import ItemKind, Study
from annotation.services.rewrite_corpus import corpus_build_from_rewrites
from core.errors import ApplicationError
from core.permissions import user_may
from tasks.models import Corpus, StyleComponent


class BuildCorpusForm(forms.Form):
    name = forms.SlugField(max_length=128, help_text="Name of the new parallel corpus.")
    component = forms.ModelChoiceField(queryset=StyleComponent.objects.order_by("name"), to_field_name="name",
                                       help_text="Its two labels name the two sides (source style, rewrite style).")
    seed = forms.IntegerField(initial=0, help_text="Seed of the train/tune/test split by source.")
    splits = forms.CharField(initial="0.8,0.1,0.1", help_text="Train, tune and test fractions of the sources.")
    references = forms.ChoiceField(choices=[("all", "every accepted rewrite (multi-reference)"),
                                            ("first", "the first accepted rewrite of each source")], initial="all")
    split_by = forms.CharField(required=False, label="Persona cut",
                               help_text="persona.ATTRIBUTE for a two-style corpus from one writer attribute "
                                         "(PASTEL); empty: source vs rewrite.")
    exclude_flagged = forms.CharField(required=False, label="Leave out rewrites flagged by",
                                      help_text="Writing signals: 'all', or names separated by commas "
                                                "(mostly_pasted, typing_speed, …); empty: keep every accepted "
                                                "rewrite.")


class RewriteCorpusAdminMixin:
    """Mixed into StudyAdmin: the "Build a parallel corpus from accepted rewrites" action."""

    def has_build_corpus_permission(self, request: HttpRequest) -> bool:
        return user_may(request.user, Corpus, "add")

    @admin.action(description="Build a parallel corpus from the accepted rewrites", permissions=["build_corpus"])
    def build_corpus_from_rewrites(self, request: HttpRequest, queryset: QuerySet[Study]) -> Any:
        if queryset.count() != 1 or queryset.get().item_kind != ItemKind.REWRITE:
            self.message_user(request, "Select exactly one rewrite study.", messages.ERROR)
            return None
        study = queryset.get()
        form = BuildCorpusForm(request.POST if "apply" in request.POST else None,
                               initial={"name": f"{study.slug}-corpus"})
        if form.is_valid():
            data = form.cleaned_data
            try:
                corpus = corpus_build_from_rewrites(
                    study_slug=study.slug, name=data["name"], component=data["component"].name, seed=data["seed"],
                    splits=data["splits"], references=data["references"], split_by=data["split_by"].strip(),
                    exclude_flagged=data["exclude_flagged"],
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                url = reverse("admin:tasks_corpus_change", args=[corpus.pk])
                self.message_user(request, format_html('Corpus <a href="{}">{}</a> built with {} pairs.', url,
                                                       corpus.name, corpus.n_pairs))
                return HttpResponseRedirect(url)
        context = {**self.admin_site.each_context(request), "form": form, "study": study, "opts": self.model._meta,
                   "title": f"Build a parallel corpus from '{study.slug}'", "action": "build_corpus_from_rewrites"}
        return TemplateResponse(request, "admin/annotation/study/build_corpus.html", context)
