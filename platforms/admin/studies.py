"""A study's platform page: what was sent and what the platform says, with buttons for each step — publish the draft,
publish, sync, decide, pay bonuses, message — each with a confirmation page that shows exactly what would be sent.
The study's own admin page gets a "Crowd platform" section linking here."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Sum
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from annotation.admin import StudyAdmin
from annotation.models import Study
from core.errors import ApplicationError
from core.permissions import admin_permission_required, user_may
from core.personal_data_doors import personal_data_door
from platforms.backends import people_platform
from platforms.models import BonusPayment, BonusRule, Decision, PlatformAccount, PlatformStudy, PlatformSubmission
from platforms.services.bonuses import platform_bonus
from platforms.services.decisions import platform_decide
from platforms.services.jobs import platform_job_start
from platforms.services.messages import platform_message
from platforms.services.preflight import platform_test_run, platform_test_run_check
from platforms.services.publish import platform_preflight


def may_spend(request: HttpRequest) -> bool:
    return user_may(request.user, PlatformStudy, "spend")


def _spend_required(request: HttpRequest) -> None:
    if not may_spend(request):
        raise PermissionDenied("You need the permission to send decisions, pay bonuses and message participants.")


def _job_redirect(request: HttpRequest, job: Any, what: str) -> HttpResponseRedirect:
    messages.info(request, f"{what}: queued as job #{job.pk}; this page shows its result when it ends.")
    return HttpResponseRedirect(reverse("admin:core_job_change", args=[job.pk]))


class PublishForm(forms.Form):
    account = forms.ModelChoiceField(queryset=PlatformAccount.objects.all(), required=False,
                                     help_text="Empty: the account PROLIFIC_API_TOKEN stands for. `make demo` has "
                                               "`mock`: a platform in memory, no account needed.")
    base_url = forms.URLField(required=False, help_text="Where participants reach this server (default: "
                                                        "STYLECROWD_PUBLIC_URL).")
    devices = forms.MultipleChoiceField(choices=[("desktop", "desktop"), ("tablet", "tablet"),
                                                 ("mobile", "mobile")], required=False,
                                        widget=forms.CheckboxSelectMultiple, help_text="None ticked: all devices.")
    screen_out_reward = forms.DecimalField(required=False, min_value=0, decimal_places=2,
                                           help_text="Prolific: fixed pay for a screened-out participant.")
    language_filter = forms.ChoiceField(
        choices=[("auto", "auto: first language, unless the study is English"), ("first", "first language"),
                 ("fluent", "fluent languages"), ("off", "off: no language filter")], initial="auto", required=False,
        help_text="Prolific: recruit by the study's language (filter ids read from Prolific's filter list).")
    bonus_cap_per_participant = forms.DecimalField(required=False, min_value=0, decimal_places=2)
    bonus_cap_per_study = forms.DecimalField(required=False, min_value=0, decimal_places=2)


class BonusForm(forms.Form):
    flat = forms.DecimalField(required=False, min_value=Decimal("0.01"), decimal_places=2,
                              help_text="The same bonus for each approved participant (besides the rules).")
    label = forms.CharField(required=False, initial="flat", max_length=40)


class MessageForm(forms.Form):
    subject = forms.CharField(required=False, max_length=200)
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "cols": 80}), max_length=4096)
    to = forms.CharField(required=False, help_text="Participant ids separated by spaces (empty: everyone).")


class BonusRuleInline(admin.TabularInline):
    """The study's bonus rules (per accepted rewrite, per correct known-answer item, flat); amounts in the account's
    currency. They produce ledger rows when bonuses are computed (Bonuses…), never a payment by themselves."""

    model = BonusRule
    extra = 0
    fields = ["kind", "amount", "label", "active"]


@admin.register(PlatformStudy)
class PlatformStudyAdmin(admin.ModelAdmin):
    inlines = [BonusRuleInline]
    list_display = ["study", "platform", "account", "state", "external_id", "external_status", "places",
                    "reward", "synced_at"]
    list_filter = ["platform", "state"]
    search_fields = ["study__slug", "external_id"]
    readonly_fields = ["study", "account", "platform", "state", "external_id", "external_status", "reward",
                       "places", "screen_out_reward_cents", "devices", "filters", "allow_list", "allow_list_id",
                       "use_block_list", "create_request", "published_at", "synced_at", "last_error", "steps",
                       "submissions_summary", "ledger_totals"]
    change_form_template = "admin/platforms/platformstudy/change_form.html"
    fields = ["steps", "study", "account", "platform", "state", "external_id", "external_status", "places", "reward",
              "screen_out_reward_cents", "devices", "filters", "allow_list", "use_block_list",
              "bonus_cap_per_participant", "bonus_cap_per_study", "submissions_summary", "ledger_totals",
              "create_request", "published_at", "synced_at", "last_error"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by publishing a study (the study page's button)

    def has_spend_permission(self, request: HttpRequest) -> bool:
        return may_spend(request)

    @admin.display(description="reward per place")
    def reward(self, obj: PlatformStudy) -> str:
        return f"{Decimal(obj.reward_cents) / 100:.2f} {obj.currency}"

    @admin.display(description="what to do")
    def steps(self, obj: PlatformStudy) -> str:
        buttons = []
        if obj.state in (PlatformStudy.State.NONE, PlatformStudy.State.CREATE_UNKNOWN, PlatformStudy.State.DRAFT,
                         PlatformStudy.State.PUBLISH_UNKNOWN):
            buttons.append((reverse("admin:platforms_platformstudy_publish", args=[obj.study_id]),
                            "Publish…" if obj.state != PlatformStudy.State.NONE else "Create the draft…"))
        if obj.external_id:
            buttons += [(reverse("admin:platforms_platformstudy_decide", args=[obj.pk]), "Decisions…"),
                        (reverse("admin:platforms_platformstudy_bonus", args=[obj.pk]), "Bonuses…"),
                        (reverse("admin:platforms_platformstudy_message", args=[obj.pk]), "Message…")]
        links = format_html_join(" ", '<a class="button" href="{}">{}</a>', buttons)
        ledger = reverse("admin:platforms_bonuspayment_changelist") + f"?platform_study__id__exact={obj.pk}"
        return format_html('{} <a class="button" href="{}">Bonus ledger</a>', links, ledger)

    @admin.display(description="submissions")
    def submissions_summary(self, obj: PlatformStudy) -> str:
        rows = (PlatformSubmission.objects.filter(platform_study=obj).values("status").annotate(n=Count("id"))
                .order_by("status"))
        unknown = PlatformSubmission.objects.filter(platform_study=obj, participant__isnull=True).count()
        text = ", ".join(f"{r['status']}: {r['n']}" for r in rows) or "none synced yet"
        return f"{text}{f' · {unknown} not known to StyleCrowd' if unknown else ''}"

    @admin.display(description="bonus ledger")
    def ledger_totals(self, obj: PlatformStudy) -> str:
        rows = (BonusPayment.objects.filter(platform_study=obj).values("state")
                .annotate(n=Count("id"), total=Sum("amount")).order_by("state"))
        return ", ".join(f"{r['state']}: {r['n']} rows, {r['total']:.2f} {obj.currency}" for r in rows) or "empty"

    # --- the step pages -----------------------------------------------------------------------------------------

    def get_urls(self) -> list:
        view = self.admin_site.admin_view
        return [
            path("publish/<int:study_id>/", view(self.publish_view), name="platforms_platformstudy_publish"),
            path("<int:pk>/sync/", view(self.sync_view), name="platforms_platformstudy_sync"),
            path("<int:pk>/decide/", view(self.decide_view), name="platforms_platformstudy_decide"),
            path("<int:pk>/bonus/", view(self.bonus_view), name="platforms_platformstudy_bonus"),
            path("<int:pk>/message/", view(self.message_view), name="platforms_platformstudy_message"),
            *super().get_urls(),
        ]

    def _render(self, request: HttpRequest, template: str, title: str, **context: Any) -> TemplateResponse:
        return TemplateResponse(request, template, {**self.admin_site.each_context(request),
                                                    "opts": self.model._meta, "title": title, **context})

    def publish_view(self, request: HttpRequest, study_id: int) -> HttpResponse:
        """Create the draft (add permission), or publish it (the permission to spend money); before publishing, the
        pre-flight (cost, eligible participants) and a test participant's run of the draft."""
        admin_permission_required(request, PlatformStudy, "add")
        study = get_object_or_404(Study, pk=study_id)
        platform_study = PlatformStudy.objects.filter(study=study).first()
        publishing = platform_study is not None and platform_study.state != PlatformStudy.State.NONE
        if publishing and request.method == "POST" and request.POST.get("test_run"):
            return self._test_run(request, study, platform_study)
        form = PublishForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            if publishing:
                _spend_required(request)
            d = form.cleaned_data
            params: dict[str, Any] = {"publish": publishing, "base_url": d["base_url"] or ""}
            if not platform_study:
                params["account"] = d["account"].name if d["account"] else ""
                if d["devices"]:
                    params["devices"] = list(d["devices"])
                if d["screen_out_reward"] is not None:
                    params["screen_out_reward_cents"] = int(d["screen_out_reward"] * 100)
                if d["language_filter"]:
                    params["language_filter"] = d["language_filter"]
            for cap in ("bonus_cap_per_participant", "bonus_cap_per_study"):
                if d[cap] is not None:
                    params[cap] = str(d[cap])
            try:
                job = platform_job_start(kind="platform_publish", study_slug=study.slug, params=params,
                                         created_by=request.user.get_username())
            except ApplicationError as exc:
                form.add_error(None, exc.message)
            else:
                return _job_redirect(request, job, "Publishing" if publishing else "Creating the draft")
        return self._render(request, "admin/platforms/publish.html",
                            f"{'Publish' if publishing else 'Create the platform draft of'} {study.slug}",
                            form=form, study=study, platform_study=platform_study, publishing=publishing,
                            **self._preflight(request, platform_study if publishing else None))

    def _preflight(self, request: HttpRequest, platform_study: PlatformStudy | None) -> dict[str, Any]:
        """The pre-flight shown before the Publish button (the draft exists), and a test run's check (?test_study)."""
        if platform_study is None or platform_study.state != PlatformStudy.State.DRAFT:
            return {}
        context: dict[str, Any] = {}
        try:
            context["preflight"] = platform_preflight(platform_study=platform_study)
        except ApplicationError as exc:
            context["preflight_error"] = exc.message
        test_study = request.GET.get("test_study", "")
        if test_study.isalnum():
            try:
                context["test_check"] = platform_test_run_check(platform_study=platform_study,
                                                                test_study_id=test_study)
            except ApplicationError as exc:
                context["preflight_error"] = exc.message
        return context

    def _test_run(self, request: HttpRequest, study: Study, platform_study: PlatformStudy) -> HttpResponse:
        """A test participant's run of the draft (Prolific's test study: no money moves); back to this page, which
        then checks the run on the platform's side."""
        admin_permission_required(request, PlatformStudy, "change")
        here = reverse("admin:platforms_platformstudy_publish", args=[study.pk])
        try:
            run = platform_test_run(platform_study=platform_study, email=request.POST.get("email", "").strip())
        except ApplicationError as exc:
            messages.error(request, f"Test run not made: {exc.message}")
            return HttpResponseRedirect(here)
        messages.info(request, format_html(
            'Test study {} made on the platform. Log in as the test participant and take it: <a href="{}">{}</a>. '
            "Then reload this page to check its submission and completion code.", run["test_study_id"],
            run["study_url"], run["study_url"]))
        return HttpResponseRedirect(f"{here}?test_study={run['test_study_id']}")

    def sync_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, PlatformStudy, "change")
        if request.method != "POST":
            return HttpResponseRedirect(reverse("admin:platforms_platformstudy_change", args=[pk]))
        platform_study = get_object_or_404(PlatformStudy.objects.select_related("study"), pk=pk)
        job = platform_job_start(kind="platform_sync", study_slug=platform_study.study.slug, params={},
                                 created_by=request.user.get_username())
        return _job_redirect(request, job, "Sync")

    def _plan_door(self, request: HttpRequest, platform_study: PlatformStudy, plan: Any, what: str) -> Any:
        """A plan names workers: raw ids with the personal-data permission (logged), pseudonyms otherwise."""
        text = str(plan)
        workers = set(platform_study.submissions.values_list("worker_id", flat=True))
        people = [(people_platform(platform_study.platform), worker) for worker in workers if worker and worker in text]
        return personal_data_door(request=request, door="admin", what=what, body=plan, people=people,
                                  study_slug=platform_study.study.slug)

    def decide_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The decisions from the submissions as last synced, exactly as they would be sent; applying them needs the
        permission to spend money and, for rejections, the confirmation box."""
        admin_permission_required(request, Decision, "view")
        platform_study = get_object_or_404(PlatformStudy.objects.select_related("study", "account"), pk=pk)
        error, refused = "", False
        if request.method == "POST":
            _spend_required(request)
            try:
                job = platform_job_start(kind="platform_decide", study_slug=platform_study.study.slug, created_by=
                                         request.user.get_username(), params={
                                             "apply": True, "sync": False,
                                             "confirm_rejections": request.POST.get("confirm_rejections") == "on"})
            except ApplicationError as exc:  # e.g. rejections without the confirmation box: said on the page
                error, refused = exc.message, True
            else:
                return _job_redirect(request, job, "Sending the decisions")
        try:
            plan = self._plan_door(request, platform_study, platform_decide(platform_study=platform_study, sync=False),
                                   "decisions to send")
        except ApplicationError as exc:
            plan, error = None, error or exc.message
        response = self._render(request, "admin/platforms/decide.html", f"Decisions for {platform_study.study.slug}",
                                platform_study=platform_study, plan=plan, error=error, may_spend=may_spend(request))
        if refused:
            response.status_code = 400
        return response

    def bonus_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, BonusPayment, "view")
        platform_study = get_object_or_404(PlatformStudy.objects.select_related("study", "account"), pk=pk)
        form = BonusForm(request.POST or request.GET or None)
        plan, error = None, ""
        flat = label = None
        if form.is_bound and form.is_valid():
            flat, label = form.cleaned_data["flat"], form.cleaned_data["label"] or "flat"
        if request.method == "POST" and request.POST.get("apply") == "1":
            _spend_required(request)
            if request.POST.get("confirm") != "on":
                error = "Tick the box to confirm the payment."
            else:
                job = platform_job_start(kind="platform_bonus", study_slug=platform_study.study.slug,
                                         created_by=request.user.get_username(),
                                         params={"apply": True, "sync": False, "label": label or "flat",
                                                 "flat": str(flat) if flat is not None else None})
                return _job_redirect(request, job, "Paying the bonuses")
        try:
            plan = self._plan_door(request, platform_study, platform_bonus(
                platform_study=platform_study, flat=flat, label=label or "flat", sync=False), "bonuses to pay")
        except ApplicationError as exc:
            error = error or exc.message
        return self._render(request, "admin/platforms/bonus.html", f"Bonuses for {platform_study.study.slug}",
                            platform_study=platform_study, plan=plan, form=form, error=error,
                            may_spend=may_spend(request))

    def message_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        admin_permission_required(request, PlatformStudy, "view")
        platform_study = get_object_or_404(PlatformStudy.objects.select_related("study", "account"), pk=pk)
        form = MessageForm(request.POST or None)
        plan, error = None, ""
        if request.method == "POST" and form.is_valid():
            d = form.cleaned_data
            to = d["to"].split() or None
            if request.POST.get("apply") == "1":
                _spend_required(request)
                job = platform_job_start(kind="platform_message", study_slug=platform_study.study.slug,
                                         created_by=request.user.get_username(),
                                         params={"apply": True, "subject": d["subject"], "body": d["body"],
                                                 "to": to or []})
                return _job_redirect(request, job, "Sending the message")
            try:
                plan = self._plan_door(request, platform_study, platform_message(
                    platform_study=platform_study, body=d["body"], subject=d["subject"], to=to), "message recipients")
            except ApplicationError as exc:
                error = exc.message
        return self._render(request, "admin/platforms/message.html", f"Message participants of "
                            f"{platform_study.study.slug}", platform_study=platform_study, form=form, plan=plan,
                            error=error, may_spend=may_spend(request))


# --- the study's own page: a "Crowd platform" section ----------------------------------------------------------------

class PlatformStudyAwareStudyAdmin(StudyAdmin):
    """The annotation app's study admin with the study's platform state and the button to run it on a platform
    (annotation never imports platforms; this subclass is registered in its place)."""

    def get_fieldsets(self, request: HttpRequest, obj: Study | None = None) -> list:
        fieldsets = list(super().get_fieldsets(request, obj))
        if obj is not None:
            fieldsets.insert(1, ("Crowd platform", {"fields": ["crowd_platform"]}))
        return fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> list:
        return [*super().get_readonly_fields(request, obj), "crowd_platform"]

    @admin.display(description="on the platform")
    def crowd_platform(self, obj: Study) -> str:
        platform_study = PlatformStudy.objects.filter(study=obj).first()
        if platform_study is None:
            return format_html(
                'Not on Prolific or MTurk through StyleCrowd (the links, codes and decisions CSV work as before). '
                '<a class="button" href="{}">Run it on a platform…</a>',
                reverse("admin:platforms_platformstudy_publish", args=[obj.pk]))
        return format_html('{} on {} (account {}{}) <a class="button" href="{}">Open its platform page</a>',
                           platform_study.get_state_display(), platform_study.get_platform_display(),
                           platform_study.account.name,
                           f", id {platform_study.external_id}" if platform_study.external_id else "",
                           reverse("admin:platforms_platformstudy_change", args=[platform_study.pk]))


admin.site.unregister(Study)
admin.site.register(Study, PlatformStudyAwareStudyAdmin)
