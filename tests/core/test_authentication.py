"""Login throttling (django-axes): the admin login and the API's Basic auth lock an address out after
AXES_FAILURE_LIMIT failures, for AXES_COOLOFF_TIME; a success before the limit resets the count."""
from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.fixture
def researcher(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser("researcher", "r@example.org", PASSWORD)


def basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def admin_login(client: Client, password: str) -> Any:
    return client.post("/admin/login/?next=/admin/", {"username": "researcher", "password": password})


def test_the_limit_comes_from_settings() -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_COOLOFF_TIME == timedelta(minutes=15)


def test_admin_login_is_locked_after_the_failure_limit(researcher: Any, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(2):
        response = admin_login(client, "wrong")
        assert response.status_code == 200 and b"Please enter the correct username" in response.content
    assert admin_login(client, "wrong").status_code == 429
    # now even the right password is refused from this address, with a Retry-After
    locked = admin_login(client, PASSWORD)
    assert locked.status_code == 429
    assert locked["Retry-After"] == str(15 * 60)
    assert b"Too many failed login attempts" in locked.content
    # another address is not affected
    assert admin_login(Client(REMOTE_ADDR="198.51.100.9"), PASSWORD).status_code == 302
    assert AccessAttempt.objects.filter(ip_address="203.0.113.7").exists()


def test_a_success_before_the_limit_resets_the_count(researcher: Any, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.8")
    for _ in range(2):
        assert admin_login(client, "wrong").status_code == 200
    assert admin_login(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):
        assert admin_login(client, "wrong").status_code == 200
    assert admin_login(client, PASSWORD).status_code == 302


def test_api_basic_auth_is_locked_after_the_failure_limit(researcher: Any, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    client = Client(REMOTE_ADDR="203.0.113.9")
    assert client.get("/api/v1/studies/", **basic("researcher", PASSWORD)).status_code == 200
    for _ in range(2):
        response = client.get("/api/v1/studies/", **basic("researcher", "wrong"))
        assert response.status_code in (401, 403), response.content
    locked = client.get("/api/v1/studies/", **basic("researcher", "wrong"))
    assert_api_error(locked, code="login_locked", status=429)
    assert locked["Retry-After"] == str(15 * 60)
    # the right password no longer helps from this address
    assert client.get("/api/v1/studies/", **basic("researcher", PASSWORD)).status_code == 429
    other = Client(REMOTE_ADDR="198.51.100.10")
    assert other.get("/api/v1/studies/", **basic("researcher", PASSWORD)).status_code == 200


def test_behind_a_proxy_each_client_address_is_counted_apart(researcher: Any, settings: Any) -> None:
    """With DJANGO_TRUSTED_PROXY_COUNT=1 (nginx in front), the address nginx appended counts, not the proxy's own
    and not what the client wrote into X-Forwarded-For itself."""
    settings.AXES_FAILURE_LIMIT = 2
    settings.TRUSTED_PROXY_COUNT = 1
    attacker = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.50")
    for _ in range(2):
        admin_login(attacker, "wrong")
    assert admin_login(attacker, PASSWORD).status_code == 429
    # a different forged left-hand entry does not help the same client
    forged = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="9.9.9.9, 203.0.113.50")
    assert admin_login(forged, PASSWORD).status_code == 429
    # another client behind the same proxy is not locked out
    colleague = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.23")
    assert admin_login(colleague, PASSWORD).status_code == 302


def test_in_process_logins_without_a_request_still_work(researcher: Any) -> None:
    """The test client's login() (and a shell's authenticate()) pass no request: nothing to count, no error."""
    assert Client().login(username="researcher", password=PASSWORD)
    assert not Client().login(username="researcher", password="wrong")


@pytest.mark.parametrize(("username", "password"), [("a\x00b", "pw"), ("researcher", "p\x00w")])
def test_a_nul_in_basic_credentials_is_refused_like_wrong_ones(username: str, password: str) -> None:
    """A NUL cannot be stored in the failed-login record: it is refused (401/403) before anything is written,
    never a 500, for anyone, signed in or not."""
    before = AccessAttempt.objects.count()
    response = Client().get("/api/v1/exports/", **basic(username, password))
    assert response.status_code in (401, 403), response.content
    assert AccessAttempt.objects.count() == before
