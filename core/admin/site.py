"""The admin site: named StyleCrowd, its apps listed in the order of the pipeline (import corpora and make task
instances, run studies, publish on a crowd platform, then agreement, filters, exports and scoring; background jobs
and accounts after), and JSON fields shown indented."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.db import models
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from core.json_guard import MAX_JSON_DEPTH, JsonRefused, json_check

# App labels in pipeline order; apps not named here (auth, axes) come after them, alphabetically.
APP_ORDER = ["tasks", "annotation", "platforms", "scoring", "core"]
# Within an app, the models a newcomer starts from come first (the rest alphabetically).
MODEL_ORDER = {
    "tasks": ["Corpus", "ParallelPair", "TaskInstance", "StyleComponent", "ScreeningQuestion"],
    "annotation": ["Study", "Participant", "Response", "RewriteReview"],
    "platforms": ["PlatformAccount", "PlatformStudy"],
    "scoring": ["AgreementRun", "FilterRun", "BenchmarkExport"],
}


@dataclass(frozen=True)
class AdminPage:
    """A page of the admin that is not a model's list (a form, a search), listed on the index under its app."""

    app_label: str
    name: str
    url_name: str
    allowed: Callable[[Any], bool]


ADMIN_PAGES: dict[str, AdminPage] = {}


def admin_page_register(*, app_label: str, name: str, url_name: str, allowed: Callable[[Any], bool]) -> None:
    """List a custom admin page on the index, under `app_label`, for users `allowed(user)` lets in (the same check
    as the page's own); apps register theirs from their admin module, so core imports no app."""
    ADMIN_PAGES[url_name] = AdminPage(app_label=app_label, name=name, url_name=url_name, allowed=allowed)


# The admin home starts with the pipeline: each step, what it does, and the admin page where it is done (URL names
# only: core imports no app; a step whose app is not installed is shown without a link).
PIPELINE = [
    ("Import", "a parallel corpus (files by style, or STEL's TSV)", "admin:tasks_corpus_import"),
    ("Generate", "task instances: select corpora, action “Generate task instances”", "admin:tasks_corpus_changelist"),
    ("Study", "create a study of the instances, preview it", "admin:annotation_study_create"),
    ("Run", "open it, publish it on a crowd platform, follow it on its overview", "admin:annotation_study_changelist"),
    ("Analyse", "agreement, the m-of-k filter, model annotators", "admin:scoring_agreement_start"),
    ("Export", "the benchmark with its dataset card, then score models", "admin:scoring_benchmarkexport_start"),
]

# Panels of the admin home under the pipeline (annotation's studies in progress): `panel(request)` returns HTML or
# "" (nothing for this user); apps register theirs from their admin module.
HOME_PANELS: dict[str, Callable[[HttpRequest], str]] = {}


def admin_home_register(*, name: str, panel: Callable[[HttpRequest], str]) -> None:
    HOME_PANELS[name] = panel


def _pipeline() -> list[dict[str, str]]:
    steps = []
    for label, text, url_name in PIPELINE:
        try:
            url = reverse(url_name)
        except NoReverseMatch:
            url = ""
        steps.append({"label": label, "text": text, "url": url})
    return steps


def _rank(order: list[str], name: str) -> tuple[int, str]:
    return (order.index(name) if name in order else len(order), name)


class PrettyJSONFormField(forms.JSONField):
    """A JSON field's box with the value indented, one key a line, sized to it; what is typed in it is held to the
    API's rule for JSON (core/json_guard.py: depth, NUL, numbers), a form error beside the field."""

    def to_python(self, value: Any) -> Any:
        try:
            return json_check(super().to_python(value))
        except RecursionError:
            raise forms.ValidationError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.", code="invalid") \
                from None
        except JsonRefused as exc:
            raise forms.ValidationError(exc.message, code="invalid") from None

    def bound_data(self, data: Any, initial: Any) -> Any:
        try:  # shown again with its error: the text as typed
            return super().bound_data(data, initial)
        except RecursionError:
            return forms.fields.InvalidJSONInput(data)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, ensure_ascii=False, cls=self.encoder, indent=2)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        return {**super().widget_attrs(widget), "class": "vLargeTextField sc-json", "spellcheck": "false",
                "style": "font-family: monospace"}


class StyleCrowdAdminSite(admin.AdminSite):
    site_header = "StyleCrowd"
    site_title = "StyleCrowd"
    index_title = "StyleCrowd: corpora → studies → crowd platforms → agreement, benchmark and scoring"
    index_template = "admin/stylecrowd_index.html"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """Django's app list, below the pipeline and the panels apps register (the studies in progress)."""
        panels = [html for html in (panel(request) for panel in HOME_PANELS.values()) if html]
        return super().index(request, {**(extra_context or {}), "pipeline": _pipeline(), "home_panels": panels})

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        apps = super().get_app_list(request, app_label)
        for app in apps:
            app["models"] += [{"name": page.name, "object_name": page.name, "admin_url": reverse(page.url_name),
                               "add_url": None, "view_only": True, "perms": {"view": True}, "model": None}
                              for page in ADMIN_PAGES.values()
                              if page.app_label == app["app_label"] and page.allowed(request.user)]
            app["models"].sort(key=lambda m: _rank(MODEL_ORDER.get(app["app_label"], []), m["object_name"]))
        return sorted(apps, key=lambda a: _rank(APP_ORDER, a["app_label"]))

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        """Every ModelAdmin edits JSON fields indented (the project's own `formfield_overrides` still win)."""
        admin_class = admin_class or admin.ModelAdmin
        overrides = {models.JSONField: {"form_class": PrettyJSONFormField},
                     **getattr(admin_class, "formfield_overrides", {})}
        admin_class = type(admin_class.__name__, (admin_class,), {"formfield_overrides": overrides,
                                                                   "__module__": admin_class.__module__})
        super().register(model_or_iterable, admin_class, **options)


def json_readonly(value: Any, field: Any, empty_value_display: str) -> Any:
    """A read-only JSON field on a change page: indented in a <pre>, not one long line."""
    if isinstance(field, models.JSONField) and value not in (None, "", [], {}):
        try:
            return format_html('<pre class="sc-json" style="white-space: pre-wrap; margin: 0">{}</pre>',
                               json.dumps(value, ensure_ascii=False, cls=field.encoder, indent=2))
        except TypeError:
            pass
    return _display_for_field(value, field, empty_value_display)


_display_for_field: Any = None


def json_readonly_install() -> None:
    """The admin's read-only fields render through django.contrib.admin.helpers.display_for_field, which prints JSON
    compactly on one line; there is no hook for a field type, so that one name is wrapped (once) here."""

    global _display_for_field
    if _display_for_field is None:
        _display_for_field = helpers.display_for_field
        helpers.display_for_field = json_readonly
