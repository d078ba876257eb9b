"""The records of what was sent: the bonus ledger (with totals per participant and study, its CSV, and the
resolution of unknown outcomes with what to check on the platform), Prolific's bulk bonuses, decisions, messages,
submissions and webhook events. Nothing here is edited by hand: the only changes are a person's resolutions."""
from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from core.admin import PersonalDataAdminMixin, job_link_register
from core.errors import ApplicationError
from core.pseudonyms import person_key
from platforms.admin.studies import may_spend
from platforms.backends import backend_for, people_platform
from platforms.models import (
    BonusPayment,
    BulkBonus,
    CallState,
    Decision,
    PlatformMessage,
    PlatformSubmission,
    WebhookEvent,
)
from platforms.services.bonuses import bonus_resolve, ledger_csv
from platforms.services.decisions import decision_resolve


class PlatformPeopleMixin(PersonalDataAdminMixin):
    """A worker's person key is made with the platform their people enter with (the mock's: the anonymous link),
    the same key annotation's pages show for them."""

    def person_of(self, obj: Any) -> tuple[str, str]:
        platform, external_id = super().person_of(obj)
        return people_platform(platform), external_id


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_spend_permission(self, request: HttpRequest) -> bool:
        return may_spend(request)


def what_to_check(row: BonusPayment) -> str:
    """Where a person looks on the platform to resolve an unknown outcome."""
    bulk = row.bulk
    return backend_for(row.platform_study.account).bonus_check_hint(
        study_id=row.platform_study.external_id, bulk_id=bulk.external_id if bulk else "",
        total=bulk.total if bulk else row.amount, currency=row.currency, people=bulk.payments.count() if bulk else 1,
        sent_at=(bulk.pay_called_at or bulk.setup_called_at) if bulk else row.sent_at,
        assignment_id=row.submission.external_id if row.submission else "", amount=row.amount,
        worker_id=row.worker_id, ref=str(row.pk))


@admin.register(BonusPayment)
class BonusPaymentAdmin(PlatformPeopleMixin, ReadOnlyAdmin):
    person_paths = ("platform_study__platform", "worker_id")
    raw_fields = ("worker_id",)
    personal_data_what = "bonus ledger"
    list_display = ["created_at", "study", "worker_id", "amount", "currency", "state", "source", "bulk_id",
                    "paid_at", "check_on_platform"]
    list_filter = ["state", "platform_study__platform", "platform_study"]
    search_fields = ["worker_id", "platform_study__study__slug", "bulk__external_id"]
    actions = ["export_csv", "resolve_paid", "resolve_not_paid"]
    change_list_template = "admin/platforms/bonuspayment/change_list.html"
    readonly_fields = ["platform_study", "worker_id", "submission", "source", "units", "units_upto", "amount",
                       "currency", "reason", "state", "bulk", "response", "error", "created_by", "created_at",
                       "sent_at", "paid_at", "resolved_by", "resolved_at", "resolution", "check_on_platform"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("platform_study__study", "platform_study__account", "bulk",
                                                     "submission")

    @admin.display(description="study", ordering="platform_study__study__slug")
    def study(self, obj: BonusPayment) -> str:
        return obj.platform_study.study.slug

    @admin.display(description="bulk bonus")
    def bulk_id(self, obj: BonusPayment) -> str:
        return obj.bulk.external_id if obj.bulk else ""

    @admin.display(description="what to check")
    def check_on_platform(self, obj: BonusPayment) -> str:
        return what_to_check(obj) if obj.state == BonusPayment.State.UNKNOWN else ""

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        if isinstance(response, TemplateResponse) and "cl" in (response.context_data or {}):
            qs = response.context_data["cl"].queryset
            response.context_data["totals_by_study"] = list(
                qs.values("platform_study__study__slug", "currency", "state").annotate(
                    rows=Count("id"), total=Sum("amount")).order_by("platform_study__study__slug", "state"))
            response.context_data["totals_by_participant"] = list(
                qs.exclude(state=BonusPayment.State.CANCELLED).values("platform_study__study__slug", "worker_id",
                                                                      "currency")
                .annotate(total=Sum("amount"), rows=Count("id")).order_by("-total")[:50])
            if not self._may(request):
                platforms = dict(qs.values_list("platform_study__study__slug", "platform_study__platform").distinct())
                for row in response.context_data["totals_by_participant"]:
                    row["worker_id"] = person_key(platform=people_platform(
                                                      platforms.get(row["platform_study__study__slug"], "")),
                                                  external_id=row["worker_id"])
        return response

    @admin.action(description="Download the ledger rows as CSV", permissions=["view"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse:
        studies = {row.platform_study for row in queryset.select_related("platform_study")}
        text = "".join(ledger_csv(platform_study=ps).split("\n", 1)[1] if i else ledger_csv(platform_study=ps)
                       for i, ps in enumerate(sorted(studies, key=lambda p: p.pk)))
        people = {(people_platform(ps.platform), worker) for ps in studies
                  for worker in BonusPayment.objects.filter(platform_study=ps).values_list("worker_id", flat=True)}
        text = self.action_output(request, body=text, people=people, what="bonus ledger CSV")
        response = HttpResponse(text, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="bonus-ledger.csv"'
        return response

    def _resolve(self, request: HttpRequest, queryset: QuerySet, paid: bool) -> None:
        done = 0
        bulks = {row.bulk for row in queryset.filter(state=BonusPayment.State.UNKNOWN) if row.bulk}
        try:
            for bulk in bulks:
                done += bonus_resolve(platform_study=bulk.platform_study, paid=paid, bulk_id=str(bulk.pk),
                                      by=request.user, note=f"resolved in the admin by {request.user}")["rows"]
            singles = queryset.filter(state=BonusPayment.State.UNKNOWN, bulk__isnull=True)
            for ps in {row.platform_study for row in singles}:
                done += bonus_resolve(platform_study=ps, paid=paid, payment_ids=[str(r.pk) for r in singles
                                                                                  if r.platform_study_id == ps.pk],
                                      by=request.user, note=f"resolved in the admin by {request.user}")["rows"]
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        outcome = "paid" if paid else "not paid (the next run pays them)"
        self.message_user(request, f"{done} row(s) resolved as {outcome}.")

    @admin.action(description="Resolve unknown outcome: I saw it PAID on the platform", permissions=["spend"])
    def resolve_paid(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._resolve(request, queryset, True)

    @admin.action(description="Resolve unknown outcome: I saw it NOT paid on the platform", permissions=["spend"])
    def resolve_not_paid(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._resolve(request, queryset, False)


@admin.register(BulkBonus)
class BulkBonusAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "platform_study", "external_id", "state", "total", "currency", "setup_called_at",
                    "pay_called_at", "error"]
    list_filter = ["state"]
    readonly_fields = ["platform_study", "external_id", "state", "csv", "total", "currency", "setup_response",
                       "pay_response", "error", "created_at", "setup_called_at", "pay_called_at", "finished_at"]


@admin.register(Decision)
class DecisionAdmin(PlatformPeopleMixin, ReadOnlyAdmin):
    person_paths = ("platform_study__platform", "worker_id")
    raw_fields = ("worker_id",)
    withheld_fields = ("request", "response")  # the platform calls name the worker
    personal_data_what = "decisions"
    list_display = ["created_at", "platform_study", "worker_id", "kind", "rejection_category", "state", "sent_at",
                    "error"]
    list_filter = ["kind", "state", "platform_study"]
    search_fields = ["worker_id", "submission__external_id"]
    actions = ["resolve_done", "resolve_not_done"]
    readonly_fields = ["platform_study", "submission", "worker_id", "kind", "evidence", "rejection_category",
                       "message", "state", "call_key", "request", "response", "error", "created_by", "created_at",
                       "sent_at", "finished_at"]

    def _resolve(self, request: HttpRequest, queryset: QuerySet, done: bool) -> None:
        n = 0
        for decision in queryset.filter(state=CallState.UNKNOWN).select_related("submission"):
            decision_resolve(decision=decision, done=done, note=f"resolved in the admin by {request.user}")
            n += 1
        self.message_user(request, f"{n} decision(s) resolved.")

    @admin.action(description="Resolve unknown outcome: done on the platform", permissions=["spend"])
    def resolve_done(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._resolve(request, queryset, True)

    @admin.action(description="Resolve unknown outcome: not done (send it again on the next run)",
                  permissions=["spend"])
    def resolve_not_done(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._resolve(request, queryset, False)


@admin.register(PlatformSubmission)
class PlatformSubmissionAdmin(PlatformPeopleMixin, ReadOnlyAdmin):
    person_paths = ("platform_study__platform", "worker_id")
    raw_fields = ("worker_id",)
    personal_data_what = "platform submissions"
    list_display = ["external_id", "platform_study", "worker_id", "known", "status", "study_code", "started_at",
                    "completed_at", "slots_released_at"]
    list_filter = ["status", "platform_study"]
    search_fields = ["external_id", "worker_id"]
    exclude = ["raw"]

    @admin.display(boolean=True, description="known to StyleCrowd")
    def known(self, obj: PlatformSubmission) -> bool:
        return obj.participant_id is not None


@admin.register(PlatformMessage)
class PlatformMessageAdmin(PlatformPeopleMixin, ReadOnlyAdmin):
    withheld_fields = ("recipients",)
    personal_data_what = "messages' recipients"

    def people_on_page(self, objects: list[Any], page: str) -> list[tuple[str, str]]:
        if page != "detail":
            return []  # counts only
        return [(people_platform(message.platform_study.platform), worker) for message in objects
                for worker in message.recipients]

    list_display = ["created_at", "platform_study", "recipient_count", "subject", "state", "created_by"]
    list_filter = ["state"]

    @admin.display(description="recipients")
    def recipient_count(self, obj: PlatformMessage) -> int:
        return len(obj.recipients)


@admin.register(WebhookEvent)
class WebhookEventAdmin(PlatformPeopleMixin, ReadOnlyAdmin):
    withheld_fields = ("payload",)  # a submission event names its worker
    personal_data_what = "webhook payloads"

    def people_on_page(self, objects: list[Any], page: str) -> list[tuple[str, str]]:
        if page == "list":
            return []
        return [(people_platform(event.account.platform), str(event.payload.get("participant_id") or ""))
                for event in objects if isinstance(event.payload, dict) and event.payload.get("participant_id")]

    list_display = ["received_at", "account", "event_type", "resource_id", "status", "state", "processed_at"]
    list_filter = ["state", "event_type"]
    search_fields = ["resource_id", "event_id"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in WebhookEvent._meta.fields]

    @admin.display(description="payload")
    def payload_pretty(self, obj: WebhookEvent) -> str:
        return format_html("<pre>{}</pre>", obj.payload)


# Where a job that ended "attention" (a call whose outcome is unknown: platforms/services/jobs.py) is resolved: its
# ledger, filtered to the study's unknown rows.
LEDGERS = {"bonuspayment": ("Resolve in the bonus ledger", True), "decision": ("Resolve in the decisions", True),
           "platformmessage": ("See the messages whose outcome is unknown", False)}


def _attention_link(attention: Any) -> tuple[str, str] | None:
    ledger = LEDGERS.get(attention.get("ledger", "")) if isinstance(attention, dict) else None
    if ledger is None:
        return None
    label, by_study = ledger
    query = "state__exact=unknown"
    if by_study and attention.get("platform_study"):
        query += f"&platform_study__id__exact={int(attention['platform_study'])}"
    changelist = reverse(f"admin:platforms_{attention['ledger']}_changelist")
    return f"{changelist}?{query}", label


job_link_register("attention", _attention_link)
