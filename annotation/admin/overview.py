"""A study's overview page, its home in the admin (`admin/annotation/study/<pk>/overview/`): where it stands and what
to do next. Its state and next steps as buttons in pipeline order (each the admin page that does the step, the
next one highlighted), progress bars, arrivals over time, money, and the warnings that need a person. Annotation
gives the page, its progress and the preview/open steps; the apps above add their steps, money and warnings
through `annotation.overview.overview_section_register` (platforms: publish to bonuses; scoring: agreement to
score). Also the study's change page's progress field and the study list's progress bar, which link here."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.models import Study
from annotation.overview import Figure, OverviewPart, Step, next_step, overview_parts, overview_section_register
from annotation.overview.plot import arrivals_svg
from annotation.overview.selectors import studies_in_progress, study_overview
from core.admin.site import admin_home_register
from core.permissions import user_may

PEOPLE = (("arrived", "arrived"), ("consented", "consented"), ("finished", "finished a session"),
          ("excluded", "excluded"), ("screened_out", "screened out"))


def _percent(part: int, whole: int) -> int:
    return round(100 * min(part, whole) / whole) if whole else 0


def progress_bar(stored: int, planned: int, label: str) -> str:
    """A labelled bar with "x of y" beside it (the study list, the change page, the admin home)."""
    return format_html('<progress max="{}" value="{}" aria-label="{}"></progress> {} of {}',
                       max(planned, 1), min(stored, planned), label, stored, planned)


def annotation_section(*, study: Study, user: Any) -> OverviewPart:
    """Preview (always possible) and open (a draft with items, for those who may change studies)."""
    may_change = user_may(user, Study, "change")
    opened = study.status != Study.Status.DRAFT
    return OverviewPart(steps=[
        Step("preview", "Preview as a participant", reverse("admin:annotation_study_preview", args=[study.pk]),
             done=opened),
        Step("open", "Open to participants", reverse("admin:annotation_study_open", args=[study.pk]), method="post",
             done=opened, available=may_change and not opened,
             note="" if may_change else "needs the permission to change studies"),
    ])


overview_section_register("annotation", annotation_section)


def _money(overview: dict[str, Any]) -> list[Figure]:
    pay, currency = overview["pay"], settings.STYLECROWD_PAY_CURRENCY
    rows = [Figure("reward per session at the target", f"{pay['reward_per_batch']:.2f} {currency} "
                   f"({pay['target_hourly_pay']:.2f} {currency}/h × {pay['estimated_minutes']} min)")]
    if pay["effective_hourly_pay"] is None:
        rows.append(Figure("effective hourly pay", "– (no completed session yet)"))
    else:
        rows.append(Figure("effective hourly pay", f"{pay['effective_hourly_pay']:.2f} {currency}/h (median "
                           f"{pay['median_minutes_per_batch']} min over {pay['batches_completed']} completed sessions)",
                           warning="implausible: see the warnings" if overview["pay_implausible"] else ""))
    return rows


def _progress_rows(overview: dict[str, Any], extra_people: list[tuple[str, int]]) -> list[dict[str, Any]]:
    rows = [{"label": "answers stored", "value": overview["answers_stored"], "of": overview["answers_planned"],
             "note": "planned: items × k"},
            {"label": "items at k", "value": overview["items_at_k"], "of": overview["items"],
             "note": f"{overview['items_closed_early']} closed early" if overview["items_closed_early"] else ""}]
    arrived = overview["people"]["arrived"]
    rows.append({"label": "participants arrived", "value": arrived, "of": None, "note": ""})
    rows += [{"label": f"participants {label}", "value": overview["people"][key], "of": arrived,
              "note": "of those who arrived"} for key, label in PEOPLE if key != "arrived"]
    rows += [{"label": f"participants {label}", "value": n, "of": arrived, "note": "on the platform"}
             for label, n in extra_people]
    for row in rows:
        row["percent"] = _percent(row["value"], row["of"]) if row["of"] is not None else None
    return rows


class StudyOverviewAdminMixin:
    """Mixed into StudyAdmin (a ModelAdmin)."""

    def get_urls(self) -> list:
        return [path("<int:pk>/overview/", self.admin_site.admin_view(self.overview_view),
                     name="annotation_study_overview"), *super().get_urls()]

    def overview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        study = get_object_or_404(Study, pk=pk)
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        overview = study_overview(study=study)
        parts = overview_parts(study=study, user=request.user)
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "study": study,
            "title": f"Overview: {study.title or study.slug}",
            "overview": overview, "steps": parts.steps, "next": next_step(parts.steps),
            "progress": _progress_rows(overview, parts.people), "arrivals": arrivals_svg(overview["arrivals"]),
            "money": [*_money(overview), *parts.money], "warnings": [*overview["warnings"], *parts.warnings],
            "refresh_seconds": getattr(settings, "STYLECROWD_OVERVIEW_REFRESH_SECONDS", 15),
        }
        return TemplateResponse(request, "admin/annotation/study/overview.html", context)

    def overview_link(self, obj: Study) -> str:
        return format_html('<a href="{}">overview</a>', reverse("admin:annotation_study_overview", args=[obj.pk]))


def studies_in_progress_panel(request: HttpRequest) -> str:
    """The admin home's "Studies in progress": open and draft studies, each with its answers as a bar and a link to
    its overview (for those who may see studies)."""
    if not user_may(request.user, Study, "view"):
        return ""
    rows = [(reverse("admin:annotation_study_overview", args=[r["study"].pk]), r["study"].title or r["study"].slug,
             r["study"].get_status_display(),
             progress_bar(r["stored"], r["planned"], f"answers stored of {r['study'].slug}"))
            for r in studies_in_progress()]
    if not rows:
        return format_html('<h2 id="in-progress-heading">Studies in progress</h2><p id="studies-in-progress">None '
                           'yet: <a href="{}">create a study</a>.</p>', reverse("admin:annotation_study_create"))
    return format_html(
        '<h2 id="in-progress-heading">Studies in progress</h2><table id="studies-in-progress" '
        'aria-labelledby="in-progress-heading"><thead><tr><th scope="col">study</th><th scope="col">state</th>'
        '<th scope="col">answers stored of planned</th></tr></thead><tbody>{}</tbody></table>',
        format_html_join("", '<tr><th scope="row"><a href="{}">{}</a></th><td>{}</td><td>{}</td></tr>', rows))


admin_home_register(name="annotation", panel=studies_in_progress_panel)
