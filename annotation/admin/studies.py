"""Researchers' door to the annotation app: studies with live progress, participants with their answers and
recommendations, batches, and the raw-response export."""
from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html, format_html_join

from annotation.admin.erasure import participant_erase_view
from annotation.admin.overview import StudyOverviewAdminMixin, progress_bar
from annotation.admin.rewrite_corpus import RewriteCorpusAdminMixin
from annotation.admin.study_setup import StudySetupAdminMixin
from annotation.api.erasure import may_erase
from annotation.models import Batch, Participant, Reservation, Response, Study, StudyItem
from annotation.selectors import study_consent_versions, study_language, study_progress
from annotation.services.answers import participant_exclude
from annotation.services.consent import special_category_check
from annotation.services.exports import decisions_serialize, responses_serialize, study_recommendations
from annotation.services.screening import screening_require
from annotation.services.study_settings import (
    ASSIGNMENT,
    ENTRY,
    PERSONAL_DATA,
    PLATFORM,
    SETTINGS_BY_NAME,
    STUDY,
    TEXTS,
    admin_section_fields,
    posterior_settings_check,
    study_settings_check,
)
from core.admin import PersonalDataAdminMixin, job_link_register, job_next_step_register
from core.errors import ApplicationError
from core.permissions import user_may
from core.pseudonyms import pseudonym


def _export(study: Study, fmt: str) -> StreamingHttpResponse:
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(responses_serialize(study=study, fmt=fmt), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-responses.{fmt}"'
    return response


def _decisions(study: Study, fmt: str) -> HttpResponse:
    response = HttpResponse(decisions_serialize(study=study, fmt=fmt), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-decisions-{fmt}.csv"'
    return response


# Settings an edit of the study is checked for here (the rest have the model's own validation or their own check).
EDITED_CHECKED = ("posterior_stop", "posterior_drop", "posterior_pilot_items", "uncertainty_model")


class StudyChangeForm(forms.ModelForm):
    """The admin's door runs the same checks as `study_create`: codes independent, screening questions present,
    and a study opens only with items."""

    class Meta:
        model = Study
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        completion, screened = data.get("completion_code") or "", data.get("screened_out_code") or ""
        if screened and screened.upper() in (completion.upper(), f"SCREENED-{completion}".upper()):
            self.add_error("screened_out_code", "The screened-out code must differ from (and not be derived from) "
                                                "the completion code: people screened out must not earn the full pay.")
        if self.instance.pk and data.get("item_kind") and data.get("screening_per_batch") is not None:
            components = StudyItem.objects.filter(study=self.instance, component__isnull=False).values_list(
                "component_id", flat=True).distinct()
            try:
                screening_require(item_kind=data["item_kind"], component_ids=list(components),
                                  screening_per_batch=data["screening_per_batch"],
                                  language=study_language(self.instance))
            except ApplicationError as exc:
                self.add_error("screening_per_batch", exc.message)
        try:  # an edit that adds a special-category question needs the explicit-consent statement too
            special_category_check(questions=data.get("eligibility_questions") or [],
                                   statement=data.get("special_category_consent") or "")
        except ApplicationError as exc:
            self.add_error("special_category_consent", exc.message)
        self._posterior_check(data)
        return data

    def _posterior_check(self, data: dict[str, Any]) -> None:
        """The posterior stop's and the uncertainty model's declared bounds and rules, as `study_create` checks them
        (annotation.services.study_settings), each error on its field."""
        try:
            study_settings_check({name: data.get(SETTINGS_BY_NAME[name].field) for name in EDITED_CHECKED})
            posterior_settings_check(adaptive=bool(data.get("adaptive_stopping")), stop=data.get("posterior_stop"),
                                     drop=data.get("posterior_drop"))
        except ApplicationError as exc:
            field = SETTINGS_BY_NAME[exc.field].field if exc.field in SETTINGS_BY_NAME else None
            self.add_error(field if field in self.fields else None, exc.message)

    def clean_status(self) -> str:
        status = self.cleaned_data["status"]
        if status == Study.Status.ACTIVE and not (self.instance.pk and self.instance.items.exists()):
            raise forms.ValidationError("A study opens to participants only when it has items.")
        return status


@admin.register(Study)
class StudyAdmin(PersonalDataAdminMixin, StudyOverviewAdminMixin, StudySetupAdminMixin, RewriteCorpusAdminMixin,
                 admin.ModelAdmin):
    personal_data_what = "participants' recommendations"
    list_display = ["slug", "overview", "item_kind", "status", "annotators_per_item", "progress_summary",
                    "pay_summary", "adaptive_stopping", "results_link", "created_at"]
    list_filter = ["item_kind", "status", "origin", "platform", "adaptive_stopping"]
    search_fields = ["slug", "title"]
    # The guide is set from a finished model run (its page's "Stop items early where this model agrees"), never typed.
    readonly_fields = ["live_progress", "participant_links", "recommendations", "created_at", "selection",
                       "guide_stop_after", "guide_source", "posterior_fit", "consent_versions"]
    actions = ["open_studies", "close_studies", "export_csv", "export_jsonl", "export_decisions_prolific",
               "export_decisions_mturk", "build_corpus_from_rewrites"]
    form = StudyChangeForm
    change_form_template = "admin/annotation/study/change_form.html"
    # The settings' rows come from their declaration (annotation.services.study_settings: each one's `section`).
    fieldsets = [
        (None, {"fields": ["slug", *admin_section_fields(STUDY), "item_kind", "origin", "status", "participant_links",
                           "live_progress"]}),
        (ASSIGNMENT, {"fields": [*admin_section_fields(ASSIGNMENT), "guide_stop_after", "guide_source",
                                 "posterior_fit", "selection"]}),
        (TEXTS, {"fields": [*admin_section_fields(TEXTS), "consent_versions", "eligibility_questions", "questions",
                            "rewrite_min_length"]}),
        (PLATFORM, {"fields": admin_section_fields(PLATFORM)}),
        (ENTRY, {
            "fields": admin_section_fields(ENTRY),
            "description": "Prolific/MTurk studies check the platform's link parameters and refuse anonymous "
                           "links; a started batch without a first answer within the grace period gives its items "
                           "back (docs/annotator-api.md).",
        }),
        (PERSONAL_DATA, {"fields": admin_section_fields(PERSONAL_DATA),
                         "description": "What the consent statement promises and retention applies "
                                        "(docs/data-protection.md)."}),
        ("Participants", {"fields": ["recommendations"]}),
    ]

    def _progress(self, obj: Study) -> dict[str, Any]:
        # computed once per row of the change list (two columns read it)
        if not hasattr(obj, "_progress_cache"):
            obj._progress_cache = study_progress(study=obj)
        return obj._progress_cache

    @admin.display(description="consent versions")
    def consent_versions(self, obj: Study) -> str:
        """Which participants agreed to which version of the consent (pseudonyms: no raw id on this page)."""
        if not obj.pk:
            return "–"
        versions = study_consent_versions(study=obj)
        if not versions:
            return "Nobody has agreed yet; the text participants will see is the consent text followed by the " \
                   "statement generated from the study's settings."
        agreed: dict[str, list[str]] = {}
        for sha, platform, external_id in (Batch.objects.filter(study=obj, consent_version__isnull=False)
                                           .values_list("consent_version__sha256", "participant__platform",
                                                        "participant__external_id").distinct()):
            agreed.setdefault(sha, []).append(pseudonym(platform=platform, external_id=external_id))
        return format_html_join(
            "", "<details><summary>sha256 <code>{}</code>: {} participant(s), {} session(s)</summary>"
                "<pre style=\"white-space: pre-wrap\">{}</pre><p>{}</p></details>",
            ((v["sha256"][:12], v["participants"], v["sessions"], v["text"],
              ", ".join(sorted(set(agreed.get(v["sha256"], []))))) for v in versions))

    @admin.display(description="progress")
    def progress_summary(self, obj: Study) -> str:
        p = self._progress(obj)
        return format_html("{} items complete<br>{} responses · {} participants · {} screened out · {} excluded",
                           progress_bar(p["items_complete"], p["items"], f"items complete of {obj.slug}"),
                           p["responses"], p["participants"], p["screened_out"], p["excluded"])

    @admin.display(description="overview")
    def overview(self, obj: Study) -> str:
        """The study's home: where it stands and what to do next (annotation/admin/overview.py)."""
        return self.overview_link(obj)

    @admin.display(description="results")
    def results_link(self, obj: Study) -> str:
        # The agreement dashboard lives in the scoring app (which reads this one); link by URL name only.
        try:
            url = reverse("admin:scoring_agreement_study", args=[obj.slug])
        except NoReverseMatch:
            return "–"
        return format_html('<a href="{}">agreement &amp; filters</a>', url)

    @admin.display(description="pay")
    def pay_summary(self, obj: Study) -> str:
        p = self._progress(obj)
        if p["median_minutes_per_batch"] is None:
            return "–"
        currency = settings.STYLECROWD_PAY_CURRENCY
        return (f"{p['median_minutes_per_batch']} min/batch · {p['effective_hourly_pay']:.2f} {currency}/h "
                f"(target {obj.target_hourly_pay:.2f} {currency}/h)")

    @admin.display(description="progress")
    def live_progress(self, obj: Study) -> str:
        """Items at k as a bar, and the way to the overview page (progress, next steps, money, warnings)."""
        if not obj.pk:
            return "–"
        p = self._progress(obj)
        return format_html('{} items complete · {} responses · {} participants. <a class="button" href="{}">'
                           "Open the study's overview</a> (progress, next steps, money and warnings)",
                           progress_bar(p["items_complete"], p["items"], "items complete"), p["responses"],
                           p["participants"], reverse("admin:annotation_study_overview", args=[obj.pk]))

    def people_on_page(self, objects: list[Any], page: str) -> list[tuple[str, str]]:
        # The list shows counts only; a study's own pages list its participants' recommendations.
        if page != "detail":
            return []
        return [(p, i) for study in objects for p, i in study.participants.values_list("platform", "external_id")]

    @admin.display(description="participants: recommendations (Prolific guidance)")
    def recommendations(self, obj: Study) -> str:
        if not obj.pk:
            return "–"
        rows = [
            (r["participant"], r["recommendation"], r["answers"], f"{len(r['failed_checks'])}/{r['attention_checks']}",
             "yes" if r["speeder"] else "", "; ".join(r["evidence"]))
            for r in study_recommendations(study=obj)
        ]
        url = reverse("study-decisions", args=[obj.slug])
        return format_html(
            '<p>Download the decisions for bulk actions: <a href="{}?format=prolific">Prolific CSV</a> · '
            '<a href="{}?format=mturk">MTurk CSV</a></p>'
            "<table><tr><th>participant</th><th>recommendation</th><th>answers</th><th>failed checks</th>"
            "<th>speeder</th><th>evidence</th></tr>{}</table>",
            url, url,
            format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows),
        )

    def has_export_permission(self, request: HttpRequest) -> bool:
        # the same rule as the API's responses export: reading responses
        return user_may(request.user, Response, "view")

    def has_export_decisions_permission(self, request: HttpRequest) -> bool:
        # the same rule as the API's decisions export: reading participants and their recommendations
        return user_may(request.user, Participant, "view")

    def _export_one(self, request: HttpRequest, queryset: QuerySet[Study], fmt: str) -> Any:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one study to export.", messages.ERROR)
            return None
        return _export(queryset.get(), fmt)

    @admin.action(description="Export raw responses (CSV)", permissions=["export"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Study]) -> Any:
        return self._export_one(request, queryset, "csv")

    @admin.action(description="Export raw responses (JSONL)", permissions=["export"])
    def export_jsonl(self, request: HttpRequest, queryset: QuerySet[Study]) -> Any:
        return self._export_one(request, queryset, "jsonl")

    def _decisions_one(self, request: HttpRequest, queryset: QuerySet[Study], fmt: str) -> Any:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one study to export its decisions.", messages.ERROR)
            return None
        return _decisions(queryset.get(), fmt)

    @admin.action(description="Export payment decisions: approve / reject / return (Prolific CSV)",
                  permissions=["export_decisions"])
    def export_decisions_prolific(self, request: HttpRequest, queryset: QuerySet[Study]) -> Any:
        return self._decisions_one(request, queryset, "prolific")

    @admin.action(description="Export payment decisions: approve / reject / return (MTurk CSV)",
                  permissions=["export_decisions"])
    def export_decisions_mturk(self, request: HttpRequest, queryset: QuerySet[Study]) -> Any:
        return self._decisions_one(request, queryset, "mturk")


@admin.register(StudyItem)
class StudyItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "kind", "component", "correct_answer", "is_closed"]
    list_filter = ["study", "kind", "is_closed"]
    search_fields = ["external_id", "family"]
    raw_id_fields = ["instance"]


class ResponseInline(admin.TabularInline):
    model = Response
    fields = ["answered_at", "study_item", "screening_question", "question", "answer", "is_correct", "is_screening",
              "is_valid", "server_seconds", "seconds", "batch_number"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Participant)
class ParticipantAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    raw_fields = ("external_id",)
    withheld_fields = ("persona",)
    personal_data_what = "participants"

    list_display = ["external_id", "platform", "study", "screened_out", "excluded", "exclusion_reason", "n_answers",
                    "created_at"]
    list_filter = ["study", "platform", "screened_out", "excluded"]
    search_fields = ["external_id"]
    readonly_fields = ["excluded_at", "created_at"]
    inlines = [ResponseInline]
    actions = ["exclude_participants"]
    change_list_template = "admin/annotation/participant/change_list.html"

    def get_urls(self) -> list[Any]:
        return [path("erase/", self.admin_site.admin_view(self.erase_view), name="annotation_participant_erase"),
                *super().get_urls()]

    def erase_view(self, request: HttpRequest) -> HttpResponse:
        return participant_erase_view(self, request)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {**(extra_context or {}), "may_erase": may_erase(request.user)})

    @admin.display(description="answers")
    def n_answers(self, obj: Participant) -> int:
        return obj.responses.count()

    @admin.action(description="Exclude: invalidate their responses and reopen their slots", permissions=["change"])
    def exclude_participants(self, request: HttpRequest, queryset: QuerySet[Participant]) -> None:
        n = 0
        try:
            for participant in queryset.select_related("study"):
                n += participant_exclude(participant=participant, reason=f"excluded by {request.user}")
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        self.message_user(request, f"Excluded {queryset.count()} participant(s); {n} responses invalidated.")


class ReservationInline(admin.TabularInline):
    model = Reservation
    fields = ["position", "public_id", "study_item", "screening_question", "slot", "expires_at", "served_at",
              "shown_at", "answered_at", "released"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Batch)
class BatchAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    person_paths = ("participant__platform", "participant__external_id")
    raw_fields = ("participant",)
    withheld_fields = ("eligibility_answers",)
    personal_data_what = "batches"

    list_display = ["participant", "study", "number", "state", "n_items", "started_at", "finished_at"]
    list_filter = ["study", "state"]
    search_fields = ["participant__external_id", "session_ref", "assignment", "consent_receipt"]
    readonly_fields = ["token", "created_at", "consented_at", "started_at", "expires_at", "finished_at",
                       "eligibility_answers"]
    inlines = [ReservationInline]


@admin.register(Response)
class ResponseAdmin(PersonalDataAdminMixin, admin.ModelAdmin):
    person_paths = ("participant__platform", "participant__external_id")
    raw_fields = ("participant",)
    withheld_fields = ("telemetry",)
    personal_data_what = "responses"

    list_display = ["participant", "study", "study_item", "screening_question", "question", "answer", "is_correct",
                    "is_screening", "is_valid", "telemetry_status", "answered_at"]
    list_filter = ["study", "is_screening", "is_valid", "is_correct", "telemetry_status"]
    search_fields = ["participant__external_id", "study_item__external_id"]
    raw_id_fields = ["participant", "study_item", "batch", "reservation"]


def _study_link(slug: object) -> tuple[str, str] | None:
    """How a job page links the study it names (core/admin.py, JOB_LINKS): to the study's overview, its home."""
    study = Study.objects.filter(slug=str(slug)).only("pk", "slug", "title").first()
    if study is None:
        return None
    return (reverse("admin:annotation_study_overview", args=[study.pk]),
            f"{study.title} ({study.slug})" if study.title else study.slug)


def _study_by_id(pk: object) -> tuple[str, str] | None:
    study = Study.objects.filter(pk=int(str(pk))).only("slug").first()
    return None if study is None else _study_link(study.slug)


def _after_generation(job: Any) -> tuple[str, str] | None:
    """Generated instances are annotated in a study: the next step is creating one."""
    return reverse("admin:annotation_study_create"), "Next: create a study of these instances"


job_link_register("study", _study_link)
job_link_register("study_slug", _study_link)
job_link_register("study_id", _study_by_id)
job_next_step_register("instances_generate", _after_generation)
