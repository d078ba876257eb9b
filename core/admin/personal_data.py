"""Personal data in the admin: the access log (read-only), and the mixin every admin of a model that holds a person's
raw platform id, persona answers or telemetry detail is built on.

Without `core.view_personal_data` a page shows the keyed pseudonym where the raw id would be (list columns, detail
pages, history and delete pages), "withheld" in place of persona answers and telemetry detail, and searching finds
people by pseudonym, never by raw id (a search by raw id would confirm who took part). With it the page is as it
always was, and each page view that shows someone writes one access-log row (door "admin").
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import reduce
from operator import or_
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from core.models import PersonalDataAccess
from core.personal_data import can_see_personal_data, personal_data_access_log
from core.personal_data_doors import WITHHELD, people_pseudonyms, people_redact
from core.pseudonyms import is_pseudonym, person_key


def _path_value(obj: Any, path: str) -> Any:
    for part in path.split("__"):
        obj = getattr(obj, part, None) if obj is not None else None
    return obj


class PersonalDataAdminMixin:
    """Put before `admin.ModelAdmin` (or a subclass) in the bases. A subclass says where its person is
    (`person_paths`: the ORM paths of the platform and the raw id), which of its columns and fields show the raw id
    (`raw_fields`, shown as `person_pseudonym` instead) and which hold persona answers or telemetry detail
    (`withheld_fields`, summarised as withheld)."""

    person_paths: tuple[str, str] = ("platform", "external_id")
    raw_fields: tuple[str, ...] = ()
    withheld_fields: tuple[str, ...] = ()
    personal_data_what = ""

    # --- who is shown ------------------------------------------------------------------------------------------

    def person_of(self, obj: Any) -> tuple[str, str]:
        platform_path, id_path = self.person_paths
        return str(_path_value(obj, platform_path) or ""), str(_path_value(obj, id_path) or "")

    def people_of(self, objects: Iterable[Any]) -> list[tuple[str, str]]:
        return [person for person in (self.person_of(obj) for obj in objects) if person[1]]

    def people_on_page(self, objects: list[Any], page: str) -> list[tuple[str, str]]:
        """The people a page shows ("list", "detail", "history", "delete", "add"): by default the objects' own person
        where the page shows their raw id or data withheld from others (history and delete pages show an object by
        its name only)."""
        if page in ("history", "delete"):
            return [person for obj in objects for person in self.people_of([obj]) if person[1] in str(obj)]
        if page == "detail" and not self.raw_fields:
            objects = [obj for obj in objects if any(_path_value(obj, name) not in (None, "", {}, [])
                                                     for name in self.withheld_fields)]
        return self.people_of(objects)

    @admin.display(description="person (pseudonym)")
    def person_pseudonym(self, obj: Any) -> str:
        platform, external_id = self.person_of(obj)
        return person_key(platform=platform, external_id=external_id) if external_id else ""

    @admin.display(description="personal data")
    def personal_data_withheld(self, obj: Any) -> str:
        held = [name for name in self.withheld_fields if _path_value(obj, name) not in (None, "", {}, [])]
        return f"{', '.join(held)}: {WITHHELD}" if held else "none"

    def _may(self, request: HttpRequest) -> bool:
        return can_see_personal_data(getattr(request, "user", None))

    def _what(self, page: str) -> str:
        return f"{self.personal_data_what or self.model._meta.verbose_name_plural} ({page})"

    # --- columns, fields and search ----------------------------------------------------------------------------

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = list(super().get_list_display(request))  # type: ignore[misc]
        if self._may(request):
            return columns
        shown = []
        for column in columns:
            name = "person_pseudonym" if column in self.raw_fields else column
            if name not in shown and column not in self.withheld_fields:
                shown.append(name)
        return shown

    def get_list_display_links(self, request: HttpRequest, list_display: Any) -> Any:
        links = super().get_list_display_links(request, list_display)  # type: ignore[misc]
        if links and not self._may(request):
            links = ["person_pseudonym" if link in self.raw_fields else link for link in links]
        return links

    def _hidden(self) -> set[str]:
        return {*self.raw_fields, *self.withheld_fields}

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))  # type: ignore[misc]
        if self._may(request):
            return fields
        ours = {"person_pseudonym", "personal_data_withheld"}
        kept = [name for name in fields if name not in self._hidden() and name not in ours]
        return [*(["person_pseudonym"] if self.raw_fields else []), *kept,
                *(["personal_data_withheld"] if self.withheld_fields else [])]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)  # type: ignore[misc]
        if self._may(request) or not getattr(self, "fieldsets", None):
            return fieldsets
        hidden = self._hidden()
        return [(name, {**options, "fields": [f for f in options["fields"] if f not in hidden]})
                for name, options in fieldsets]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))  # type: ignore[misc]
        if self._may(request):
            return fields
        return [*(f for f in fields if f not in self._hidden()), "person_pseudonym", "personal_data_withheld"]

    def _search_field_is_raw(self, field: str) -> bool:
        name = field.lstrip("^=@")
        return name == self.person_paths[1] or name in self.raw_fields

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        if is_pseudonym(term):
            platform_path, id_path = self.person_paths
            pairs = set(queryset.values_list(platform_path, id_path))
            ids = [(p, i) for p, i in pairs if i and person_key(platform=str(p), external_id=str(i)) == term]
            match = reduce(or_, (Q(**{platform_path: p, id_path: i}) for p, i in ids), Q(pk__in=[]))
            return queryset.filter(match), False
        if self._may(request) or not term:
            return super().get_search_results(request, queryset, search_term)  # type: ignore[misc]
        fields = [f for f in self.get_search_fields(request) if not self._search_field_is_raw(f)]  # type: ignore
        if not fields:
            return queryset.none(), False
        words = [Q(**{f"{field.lstrip('^=@')}__icontains": word}) for word in term.split() for field in fields]
        return queryset.filter(reduce(or_, words)), False

    # --- pages: log what is shown, or put pseudonyms in it -----------------------------------------------------

    def _guard(self, request: HttpRequest, response: HttpResponse, people: list[tuple[str, str]], page: str) -> Any:
        if not isinstance(response, TemplateResponse) or response.status_code != 200:
            return response
        if self._may(request):
            shown = set(people)
            if shown and request.method == "GET":
                personal_data_access_log(user=request.user, door="admin", what=self._what(page), people=len(shown))
            return response
        pseudonyms = people_pseudonyms(people)

        def redact(rendered: HttpResponse) -> None:
            rendered.content = people_redact(rendered.content, pseudonyms=pseudonyms)

        response.add_post_render_callback(redact)
        return response

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        response = super().changelist_view(request, extra_context)  # type: ignore[misc]
        cl = (getattr(response, "context_data", None) or {}).get("cl")
        people = self.people_on_page(list(cl.result_list), "list") if cl is not None else []
        return self._guard(request, response, people, "list")

    def _object_page(self, request: HttpRequest, object_id: str, response: Any, page: str) -> Any:
        obj = self.get_object(request, unquote(object_id)) if object_id else None  # type: ignore[attr-defined]
        return self._guard(request, response, self.people_on_page([obj], page) if obj is not None else [], page)

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None) -> Any:
        response = super().add_view(request, form_url, extra_context)  # type: ignore[misc]
        people: list[tuple[str, str]] = []
        for name in self.raw_fields:  # a person chosen from a drop-down: every person is listed
            field = self.model._meta.get_field(name)  # type: ignore[attr-defined]
            if field.is_relation and name not in getattr(self, "raw_id_fields", ()):
                people += list(field.related_model._default_manager.values_list("platform", "external_id"))
        return self._guard(request, response, [p for p in people if p[1]], "add")

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> Any:
        response = super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc]
        return self._object_page(request, object_id, response, "detail")

    def history_view(self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None) -> Any:
        response = super().history_view(request, object_id, extra_context)  # type: ignore[misc]
        return self._object_page(request, object_id, response, "history")

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None) -> Any:
        response = super().delete_view(request, object_id, extra_context)  # type: ignore[misc]
        return self._object_page(request, object_id, response, "delete")

    def action_output(self, request: HttpRequest, *, body: Any, people: Iterable[tuple[str, str]], what: str) -> Any:
        """What an admin action hands back (a file's text, a message): as it is and logged, or with pseudonyms."""
        people = list(people)
        if self._may(request):
            if people:
                personal_data_access_log(user=request.user, door="admin", what=what, people=len(set(people)))
            return body
        return people_redact(body, pseudonyms=people_pseudonyms(people))


@admin.register(PersonalDataAccess)
class PersonalDataAccessAdmin(admin.ModelAdmin):
    """The access log: read by superusers and by those given its view permission (the data steward role)."""

    list_display = ["at", "username", "door", "what", "study_slug", "people"]
    list_filter = ["door", "at"]
    search_fields = ["username", "what", "study_slug"]
    date_hierarchy = "at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
