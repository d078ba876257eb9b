"""Platform accounts: the token is write-only (a password box that never shows it back) and checked against the
platform before anything is stored."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from core.errors import ApplicationError
from platforms.backends import backend_class
from platforms.models import PlatformAccount
from platforms.services.accounts import account_create, account_set_token, account_update


class PlatformAccountForm(forms.ModelForm):
    token = forms.CharField(
        required=False, strip=True, widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Prolific API token: stored encrypted, never shown again. Leave empty to keep the current one, or "
                  "use an environment variable (token env).")

    class Meta:
        model = PlatformAccount
        fields = ["name", "platform", "token_env", "api_url", "workspace_id", "project_id", "sandbox",
                  "aws_profile", "endpoint_url"]

    def _post_clean(self) -> None:
        """After the form's own checks (the name's uniqueness included): the service checks the token with the
        platform and stores the account, or says why not."""
        super()._post_clean()
        if self.errors:
            return
        data = self.cleaned_data
        try:
            if self.instance.pk is None:
                self.created = account_create(
                    name=data["name"], platform=data["platform"], token=data.get("token") or "",
                    token_env=data.get("token_env") or "", workspace_id=data.get("workspace_id") or "",
                    project_id=data.get("project_id") or "", api_url=data.get("api_url") or "",
                    sandbox=data.get("sandbox", True), aws_profile=data.get("aws_profile") or "",
                    endpoint_url=data.get("endpoint_url") or "")
            else:
                self.updated = account_update(account=PlatformAccount.objects.get(pk=self.instance.pk), **{
                    f: data.get(f) if data.get(f) is not None else "" for f in (
                        "name", "token_env", "api_url", "workspace_id", "project_id", "aws_profile",
                        "endpoint_url")}, sandbox=data.get("sandbox", True))
                if data.get("token"):
                    account_set_token(account=self.updated, token=data["token"])
        except ApplicationError as exc:
            field = exc.field if exc.field in self.fields else None
            self.add_error(field, exc.message)


@admin.register(PlatformAccount)
class PlatformAccountAdmin(admin.ModelAdmin):
    form = PlatformAccountForm
    list_display = ["name", "platform", "token_source", "workspace_id", "project_id", "sandbox", "block_list_id",
                    "webhook_url", "checked_at"]
    readonly_fields = ["token_source", "user_id", "block_list_id", "webhook_url", "webhook_subscription_id",
                       "checked_at", "created_at"]

    def get_fields(self, request: HttpRequest, obj: PlatformAccount | None = None) -> list[str]:
        fields = ["name", "platform", "token", "token_env", "api_url", "workspace_id", "project_id", "sandbox",
                  "aws_profile", "endpoint_url"]
        return fields + (self.readonly_fields if obj else [])

    @admin.display(description="token")
    def token_source(self, obj: PlatformAccount) -> str:
        if obj.token_env:
            return f"from ${obj.token_env}"
        if obj.token_encrypted:
            return "stored encrypted (hidden)"
        return backend_class(obj.platform).CREDENTIALS

    def save_model(self, request: HttpRequest, obj: PlatformAccount, form: Any, change: bool) -> None:
        if not change:  # the service created it, after checking the token with the platform
            obj.pk = form.created.pk
            obj.refresh_from_db()
            return
        obj.refresh_from_db()  # the service saved the change (form._post_clean), after its checks
