"""Platform accounts, and the platform side of a study (which account runs it)."""
from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.error_codes import PLATFORM_MISMATCH
from annotation.models import EntryPlatform, Study
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from platforms.backends import DEFAULT_PLATFORM, backend_for
from platforms.backends.base import PlatformBackend
from platforms.crypto import secret_encrypt
from platforms.error_codes import ACCOUNT_FIXED, EXISTS, INVALID_TOKEN_ENV, NO_ACCOUNT, NOT_ON_PLATFORM
from platforms.models import Platform, PlatformAccount, PlatformStudy

TOKEN_ENV = re.compile(r"^[A-Z][A-Z0-9_]*PROLIFIC[A-Z0-9_]*$|^PROLIFIC[A-Z0-9_]*$")


def _backend(platform: str) -> PlatformBackend:
    """A backend for an account not stored yet: for the platform's own rules on its fields."""
    return backend_for(PlatformAccount(platform=platform))


def account_urls_check(*, platform: str, api_url: str = "", endpoint_url: str = "", token_env: str = "",
                       token: str = "") -> None:
    """Where a token may be sent, and which variable may be read as one: each platform says where its calls may go
    (a token only to Prolific's API or an address PLATFORM_ALLOWED_API_URLS allows, so an admin form cannot send it
    elsewhere); only a variable named for Prolific is read as a token (never DJANGO_SECRET_KEY or AWS keys)."""
    _backend(platform).account_fields_check(token=token, token_env=token_env, api_url=api_url,
                                            endpoint_url=endpoint_url)
    if token_env and not TOKEN_ENV.match(token_env):
        raise ApplicationError(f"Token env: {token_env!r} — only an upper-case variable whose name contains PROLIFIC "
                               "is read as a token (so no other secret of the server can be sent).",
                               code=INVALID_TOKEN_ENV, field="token_env")


def account_create(
    *, name: str, platform: str, token: str = "", token_env: str = "", workspace_id: str = "", project_id: str = "",
    api_url: str = "", sandbox: bool = True, aws_profile: str = "", endpoint_url: str = "", check: bool = True,
) -> PlatformAccount:
    """A new account, checked against the platform first (Prolific: users/me with the token; MTurk: the balance);
    a refused token stores nothing."""
    if platform not in Platform.values:
        raise ApplicationError(f"Platform: one of {', '.join(Platform.values)}, not {platform!r}.", field="platform")
    if not name.strip():
        raise ApplicationError("Name: must not be empty.", field="name")
    if PlatformAccount.objects.filter(name=name).exists():
        raise ApplicationError(f"Name: an account named {name!r} exists already.", code=EXISTS, status=409,
                               field="name")
    if _backend(platform).TAKES_TOKEN and bool(token) == bool(token_env):
        raise ApplicationError("Token: give either the token (stored encrypted) or the name of the environment "
                               "variable that holds it (token_env), not both or neither.", field="token")
    account_urls_check(platform=platform, api_url=api_url, endpoint_url=endpoint_url, token_env=token_env,
                       token=token)
    account = PlatformAccount(name=name, platform=platform, token_env=token_env, workspace_id=workspace_id,
                              project_id=project_id, api_url=api_url, sandbox=sandbox, aws_profile=aws_profile,
                              endpoint_url=endpoint_url)
    if token:
        account.token_encrypted = secret_encrypt(token)
    if check:
        _check(account)
    account.save()
    return account


def _check(account: PlatformAccount) -> dict[str, Any]:
    backend = backend_for(account)
    try:
        facts = backend.account_check()
    finally:
        backend.close()
    account.user_id = str(facts.get("user_id") or "")
    account.checked_at = timezone.now()
    return facts


def account_check(*, account: PlatformAccount) -> dict[str, Any]:
    facts = _check(account)
    PlatformAccount.objects.filter(pk=account.pk).update(user_id=account.user_id, checked_at=account.checked_at)
    return {"account": account.name, "platform": account.platform, "ok": True,
            **{k: v for k, v in facts.items() if k != "email"}}


def account_set_token(*, account: PlatformAccount, token: str, check: bool = True) -> PlatformAccount:
    """Replace a Prolific account's token (checked first; a refused token changes nothing)."""
    if not backend_for(account).TAKES_TOKEN or not token:
        raise ApplicationError("Token: only a Prolific account takes a token.", field="token")
    candidate = PlatformAccount(pk=account.pk, name=account.name, platform=account.platform, api_url=account.api_url,
                                token_encrypted=secret_encrypt(token))
    if check:
        _check(candidate)
    PlatformAccount.objects.filter(pk=account.pk).update(token_encrypted=candidate.token_encrypted, token_env="",
                                                         checked_at=candidate.checked_at)
    account.refresh_from_db()
    return account


def account_update(*, account: PlatformAccount, **fields: Any) -> PlatformAccount:
    """Change an account's settings (not its token: account_set_token). Where the token is sent and which variable
    holds it are checked as at creation."""
    editable = {"name", "token_env", "api_url", "workspace_id", "project_id", "sandbox", "aws_profile",
                "endpoint_url"}
    unknown = set(fields) - editable
    if unknown:
        raise ApplicationError(f"Account: {', '.join(sorted(unknown))} cannot be changed here.", field="account")
    merged = {f: fields.get(f, getattr(account, f)) for f in editable}
    account_urls_check(platform=account.platform, api_url=merged["api_url"], endpoint_url=merged["endpoint_url"],
                       token_env=merged["token_env"])
    if merged["token_env"] and account.token_encrypted and merged["token_env"] != account.token_env:
        merged_changes = {**merged, "token_encrypted": ""}  # one source of the token at a time
    else:
        merged_changes = merged
    PlatformAccount.objects.filter(pk=account.pk).update(**merged_changes)
    account.refresh_from_db()
    return account


def account_default(*, platform: str) -> PlatformAccount | None:
    """The account a platform has without set-up: PROLIFIC_API_TOKEN makes a Prolific account, the mock platform
    always has one; MTurk none."""
    fields = _backend(platform).default_account() if platform in Platform.values else None
    if fields is None:
        return None
    name = fields.pop("name")
    account, _ = PlatformAccount.objects.get_or_create(name=name, defaults={"platform": platform, **fields})
    return account


def account_get(*, name: str) -> PlatformAccount:
    account = PlatformAccount.objects.filter(name=name).first()
    if account is None:
        raise ApplicationError(f"Account: no platform account named {name!r}.", code=NOT_FOUND, status=404,
                               field="account")
    return account


def study_get(*, slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug '{slug}'.", code=NOT_FOUND, status=404, field="study")
    return study


def platform_study_get(*, study: Study) -> PlatformStudy:
    platform_study = PlatformStudy.objects.filter(study=study).select_related("account", "study").first()
    if platform_study is None:
        raise ApplicationError(
            f"Study {study.slug} is not on a crowd platform yet: publish it first (platform_publish), or keep "
            "today's flow (the participant link, the codes and the decisions CSV).", code=NOT_ON_PLATFORM,
            status=409, field="study")
    return platform_study


def platform_study_for(*, study: Study, account: PlatformAccount | None = None) -> PlatformStudy:
    """The study's platform side, made on first use with the account given, or the study's platform's default."""
    existing = PlatformStudy.objects.filter(study=study).select_related("account", "study").first()
    if existing is not None:
        if account is not None and account.pk != existing.account_id:
            raise ApplicationError(f"Account: study {study.slug} runs on account {existing.account.name}; it cannot "
                                   "move to another account.", code=ACCOUNT_FIXED, status=409, field="account")
        return existing
    wanted = study.platform if study.platform != EntryPlatform.ANY else None
    if account is None:
        account = account_default(platform=wanted or DEFAULT_PLATFORM)
    if account is None:
        raise ApplicationError(
            f"Study {study.slug} has no platform account: create one (platform_account create …, or the admin's "
            "Crowd platforms › Platform accounts), or set PROLIFIC_API_TOKEN. Without one, the study keeps today's "
            "flow: the participant link, the codes and the decisions CSV.", code=NO_ACCOUNT, status=409,
            field="account")
    if wanted and wanted != account.platform:
        raise ApplicationError(f"Account: study {study.slug} takes {wanted} links only; account {account.name} is "
                               f"on {account.platform}.", code=PLATFORM_MISMATCH, status=409, field="account")
    with transaction.atomic():
        platform_study, _ = PlatformStudy.objects.get_or_create(
            study=study, defaults={"account": account, "platform": account.platform,
                                   "currency": backend_for(account).currency()})
    return PlatformStudy.objects.select_related("account", "study").get(pk=platform_study.pk)
