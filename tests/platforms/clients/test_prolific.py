"""The Prolific client: timeouts, Retry-After, which calls are retried (only those safe to repeat), pagination to
the last page, and a token that never leaves for another host or shows in a log line or an error."""
from __future__ import annotations

import logging

import httpx
import pytest

from platforms.clients.errors import NOT_SENT, REFUSED, UNKNOWN, PlatformCallError
from platforms.clients.prolific import ProlificClient
from tests.platforms.conftest import TOKEN


@pytest.fixture
def client(fake_prolific):  # noqa: ANN001, ANN201
    slept: list[float] = []
    c = ProlificClient(token=TOKEN, base_url=fake_prolific.url, timeout=15.0, sleep=slept.append)
    c.slept = slept
    yield c
    c.close()


def test_a_read_honours_retry_after_then_succeeds(client, fake_prolific) -> None:
    fake_prolific.fail("GET", r"/users/me/", "429", retry_after=7, times=2)
    assert client.me()["id"] == fake_prolific.user["id"]
    assert client.slept[:2] == [7.0, 7.0]
    assert len(fake_prolific.calls_to("GET", r"/users/me/")) == 3


def test_a_read_is_retried_after_a_5xx_and_a_timeout(client, fake_prolific) -> None:
    fake_prolific.fail("GET", r"/users/me/", "500")
    fake_prolific.fail("GET", r"/users/me/", "timeout_before")
    client._http.timeout = httpx.Timeout(1.0)  # the fake answers after 2.5 s
    assert client.me()["id"] == fake_prolific.user["id"]
    assert len(fake_prolific.calls_to("GET", r"/users/me/")) == 3


def test_a_call_that_is_not_safe_to_repeat_is_sent_once(client, fake_prolific) -> None:
    fake_prolific.fail("POST", r"/messages/bulk/", "429", retry_after=3)
    with pytest.raises(PlatformCallError) as exc:
        client.message_bulk("a" * 24, ["b" * 24], "hello")
    assert exc.value.outcome == REFUSED and exc.value.retry_after == 3 and exc.value.headers["Retry-After"] == "3"
    fake_prolific.fail("POST", r"/messages/bulk/", "500")
    with pytest.raises(PlatformCallError) as exc:
        client.message_bulk("a" * 24, ["b" * 24], "hello")
    assert exc.value.outcome == UNKNOWN
    fake_prolific.fail("POST", r"/messages/bulk/", "timeout_after")
    client._http.timeout = httpx.Timeout(1.0)
    with pytest.raises(PlatformCallError) as exc:
        client.message_bulk("a" * 24, ["b" * 24], "hello")
    assert exc.value.outcome == UNKNOWN and "may have been carried out" in exc.value.message
    assert len(fake_prolific.calls_to("POST", r"/messages/bulk/")) == 3 and client.slept == []
    assert len(fake_prolific.messages) == 1  # the one that timed out after Prolific took it


def test_pagination_follows_next_to_the_last_page(client, fake_prolific) -> None:
    study = "c" * 24
    for n in range(5):
        fake_prolific.add_submission(study, f"{n:024x}")
    rows = list(client.submissions_list(study))
    assert [r["participant_id"] for r in rows] == [f"{n:024x}" for n in range(5)]
    assert len(fake_prolific.calls_to("GET", r"^/api/v1/submissions/$")) == 3  # 2 + 2 + 1


def test_a_next_link_to_another_host_never_gets_the_token(client, fake_prolific, monkeypatch) -> None:
    study = "d" * 24
    for n in range(3):
        fake_prolific.add_submission(study, f"{n:024x}")
    original = fake_prolific._submissions_page

    def evil(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        status, body, headers = original(*args, **kwargs)
        if body["_links"]["next"]["href"]:
            body["_links"]["next"]["href"] = "http://attacker.example/steal?page=2"
        return status, body, headers

    monkeypatch.setattr(fake_prolific, "_submissions_page", evil)
    with pytest.raises(PlatformCallError) as exc:
        list(client.submissions_list(study))
    assert exc.value.outcome == NOT_SENT and "attacker.example" in exc.value.message


def test_a_wrong_token_is_a_clear_error(fake_prolific) -> None:
    with ProlificClient(token="wrong", base_url=fake_prolific.url, timeout=15.0) as bad:
        with pytest.raises(PlatformCallError) as exc:
            bad.me()
    assert exc.value.code == "platform_unauthorized" and "401" in exc.value.message and "wrong" not in exc.value.message


def test_the_token_is_in_no_log_line_or_error(client, fake_prolific, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    fake_prolific.fail("GET", r"/users/me/", "500", times=4)
    with pytest.raises(PlatformCallError) as exc:
        client.me()
    assert list(client.submissions_list("e" * 24)) == []
    assert TOKEN not in caplog.text and TOKEN not in exc.value.message and TOKEN not in str(exc.value.as_dict())
    assert "prolific GET /api/v1/users/me/ -> 500" in caplog.text


def test_an_unreachable_api_sent_nothing(platform_settings) -> None:
    with ProlificClient(token=TOKEN, base_url="http://127.0.0.1:9/", timeout=0.5, sleep=lambda s: None) as c:
        with pytest.raises(PlatformCallError) as exc:
            c.bonus_pay("f" * 24)
    assert exc.value.outcome == NOT_SENT and exc.value.status == 503


def test_the_filter_list_is_read_in_the_spec_s_shape_and_retried_as_a_read(client, fake_prolific) -> None:
    fake_prolific.fail("GET", r"/filters/", "500")
    rows = client.filters_list(fake_prolific.workspace_id)
    first = next(r for r in rows if r["title"] == "First language")
    assert first["type"] == "select" and "French" in first["choices"].values()
    assert len(fake_prolific.calls_to("GET", r"/filters/")) == 2 and fake_prolific.violations == []
