"""Accounts: a token checked before anything is stored, encrypted at rest, and never shown back by any door (admin,
API, command line, job errors, exports, logs)."""
from __future__ import annotations

import json
import logging

import pytest
from django.core.management import call_command
from django.db import connection

from core.errors import ApplicationError
from platforms.models import PlatformAccount
from platforms.services.accounts import account_create
from platforms.services.bonuses import ledger_csv
from tests.helpers import assert_api_error
from tests.platforms.conftest import TOKEN, on_prolific, paid_study

pytestmark = pytest.mark.django_db


def test_a_wrong_token_stores_nothing(fake_prolific) -> None:
    with pytest.raises(ApplicationError) as exc:
        account_create(name="bad", platform="prolific", token="not-the-token", api_url=fake_prolific.url)
    assert exc.value.code == "platform_unauthorized" and not PlatformAccount.objects.exists()


def test_the_token_is_encrypted_at_rest(prolific_account) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM platforms_platformaccount")
        row = cursor.fetchone()
    assert TOKEN not in repr(row)
    assert prolific_account.token_encrypted and prolific_account.user_id


def test_storing_a_token_needs_the_encryption_key(fake_prolific, settings) -> None:
    settings.STYLECROWD_ENCRYPTION_KEY = ""
    with pytest.raises(ApplicationError, match="STYLECROWD_ENCRYPTION_KEY"):
        account_create(name="lab", platform="prolific", token=TOKEN, api_url=fake_prolific.url)
    assert not PlatformAccount.objects.exists()


def test_a_token_from_the_environment(fake_prolific, monkeypatch) -> None:
    monkeypatch.setenv("LAB_PROLIFIC_TOKEN", TOKEN)
    account = account_create(name="env", platform="prolific", token_env="LAB_PROLIFIC_TOKEN", api_url=fake_prolific.url)
    assert account.token_env == "LAB_PROLIFIC_TOKEN" and not account.token_encrypted


def test_no_door_shows_the_token(prolific_account, fake_prolific, api, admin_client, capsys, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    study = paid_study()
    on_prolific(study, prolific_account, fake_prolific)
    pages = [
        api.get("/api/v1/platform-accounts/").content,
        api.get(f"/api/v1/studies/{study.slug}/platform/").content,
        admin_client.get("/admin/platforms/platformaccount/").content,
        admin_client.get(f"/admin/platforms/platformaccount/{prolific_account.pk}/change/").content,
        admin_client.get(f"/admin/platforms/platformstudy/{study.platform_study.pk}/change/").content,
        admin_client.get(f"/admin/annotation/study/{study.pk}/change/").content,
        ledger_csv().encode(),
    ]
    call_command("platform_account", "list")
    call_command("platform_account", "check", "--name", "lab")
    pages.append(capsys.readouterr().out.encode())
    assert all(page and TOKEN.encode() not in page for page in pages)
    assert b"stored encrypted" in pages[0]
    assert TOKEN not in caplog.text


def test_the_api_creates_accounts_and_refuses_a_wrong_token(fake_prolific, api) -> None:
    response = api.post("/api/v1/platform-accounts/", {"name": "lab", "platform": "prolific", "token": "nope",
                                                       "api_url": fake_prolific.url}, format="json")
    assert_api_error(response, code="platform_unauthorized", status=400)
    assert not PlatformAccount.objects.exists()
    response = api.post("/api/v1/platform-accounts/", {"name": "lab", "platform": "prolific", "token": TOKEN,
                                                       "api_url": fake_prolific.url}, format="json")
    assert response.status_code == 201, response.content
    assert TOKEN not in response.content.decode() and response.json()["token"] == "stored encrypted"


def test_the_admin_add_form_checks_the_token_and_never_renders_it(fake_prolific, admin_client) -> None:
    form = {"name": "lab", "platform": "prolific", "token": "nope", "api_url": fake_prolific.url, "sandbox": "on"}
    page = admin_client.post("/admin/platforms/platformaccount/add/", form)
    assert page.status_code == 200 and b"401" in page.content and not PlatformAccount.objects.exists()
    assert b'value="nope"' not in page.content  # the refused token is not echoed back either
    page = admin_client.post("/admin/platforms/platformaccount/add/", {**form, "token": TOKEN})
    assert page.status_code == 302, page.content[:2000]
    account = PlatformAccount.objects.get()
    assert account.token_encrypted and account.checked_at


def test_the_command_reads_a_token_from_stdin_never_argv(fake_prolific, capsys, monkeypatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))
    call_command("platform_account", "create", "--name", "lab", "--token-stdin", "--api-url", fake_prolific.url)
    out = capsys.readouterr().out.strip().splitlines()[-1]
    summary = json.loads(out)
    assert summary["ok"] and summary["created"]["token"] == "stored encrypted" and TOKEN not in out


def test_a_token_is_never_sent_to_another_address(fake_prolific, prolific_account, admin_client, settings) -> None:
    with pytest.raises(ApplicationError) as exc:
        account_create(name="evil", platform="prolific", token=TOKEN, api_url="https://attacker.example/")
    assert exc.value.code == "url_not_allowed" and not PlatformAccount.objects.filter(name="evil").exists()
    # The admin cannot point a stored token somewhere else either.
    page = admin_client.post(f"/admin/platforms/platformaccount/{prolific_account.pk}/change/", {
        "name": "lab", "platform": "prolific", "api_url": "https://attacker.example/", "sandbox": "on",
        "workspace_id": prolific_account.workspace_id})
    assert page.status_code == 200 and b"not Prolific" in page.content
    prolific_account.refresh_from_db()
    assert prolific_account.api_url == fake_prolific.url


def test_only_a_prolific_variable_is_read_as_a_token(fake_prolific, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_SECRET_KEY", "not-for-prolific")
    with pytest.raises(ApplicationError) as exc:
        account_create(name="env", platform="prolific", token_env="DJANGO_SECRET_KEY", api_url=fake_prolific.url)
    assert exc.value.code == "invalid_token_env" and not PlatformAccount.objects.exists()
    assert not fake_prolific.calls  # nothing was sent anywhere


def test_every_platform_has_one_backend_behind_the_interface() -> None:
    """The registry names a backend for each platform an account can have, and each implements the interface."""
    from django.utils.module_loading import import_string

    from platforms.backends import PLATFORM_BACKENDS
    from platforms.backends.base import PlatformBackend
    from platforms.models.accounts import Platform

    assert list(PLATFORM_BACKENDS) == list(Platform.values)
    interface = {name for name in vars(PlatformBackend) if not name.startswith("_")}
    assert {"account_check", "draft_call", "publish_call", "send", "submissions"} <= interface
    for path in PLATFORM_BACKENDS.values():
        backend = import_string(path)
        assert interface <= set(dir(backend)), (path, sorted(interface - set(dir(backend))))
