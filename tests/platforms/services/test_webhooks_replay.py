"""Webhook deliveries that an attacker replays or forges around the signature (issue: an attack run against the
production stack): each signed delivery is stored and processed once whatever unsigned header it carries, the
timestamp must be a finite number, a large body is refused before any work, a deep one is a 400, and a flood of
distinct valid events is spread out per account, none dropped. The platform calls are counted at the fake
Prolific (tests/platforms/fake_prolific.py)."""
from __future__ import annotations

import json
import time

import pytest
from django.core.cache import cache
from django.db import IntegrityError, transaction

from platforms.models import WebhookEvent
from platforms.services import webhooks
from platforms.services.webhooks import webhook_event_process, webhook_signature, webhooks_drain
from tests.helpers import assert_api_error
from tests.platforms.services.test_webhooks import deliver, hooked  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db
SUBMISSION_READ = r"^/api/v1/submissions/\w+/$"


class InlineProcess:
    """The processing task run at once in this process (instead of a worker), counting what was queued."""

    def __init__(self) -> None:
        self.queued: list[int] = []

    def delay(self, pk: int) -> None:
        self.queued.append(pk)
        webhook_event_process(event_id=pk)


@pytest.fixture
def inline(monkeypatch) -> InlineProcess:  # noqa: ANN001
    process = InlineProcess()
    monkeypatch.setattr(webhooks, "registered_task", lambda name: process)
    cache.clear()  # the per-account processing windows
    return process


def signed(client, secret: str, body: bytes, *, timestamp: str, event_id: str = "ev"):  # noqa: ANN001, ANN201
    return client.post("/api/v1/platform-hooks/prolific/lab/", data=body, content_type="application/json",
                       HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature(secret=secret, timestamp=timestamp,
                                                                           body=body),
                       HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp, HTTP_X_EVENT_ID=event_id)


def test_a_captured_delivery_replayed_100_times_with_new_event_ids_is_stored_and_processed_once(
        hooked, fake_prolific, client, inline, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    _, secret = hooked
    sub = fake_prolific.add_submission("f" * 24, "e" * 24, status="RETURNED")
    body = json.dumps({"resource_id": sub["id"], "event_type": "submission.status.change",
                       "status": "RETURNED"}).encode()
    stamp = str(int(time.time()))
    answers = []
    for n in range(100):
        with django_capture_on_commit_callbacks(execute=True):
            answers.append(signed(client, secret, body, timestamp=stamp, event_id=f"replay-{n}"))
    assert {r.status_code for r in answers} == {200}
    assert [r.json()["duplicate"] for r in answers] == [False] + [True] * 99
    assert WebhookEvent.objects.count() == 1
    assert len(fake_prolific.calls_to("GET", SUBMISSION_READ)) == 1  # the calls of one delivery, not of 100


def test_the_key_is_what_prolific_signed_and_the_database_holds_it(hooked, client) -> None:  # noqa: F811
    _, secret = hooked
    body = b'{"resource_id": "x", "event_type": "study.status.change"}'
    stamp = str(int(time.time()))
    signed(client, secret, body, timestamp=stamp, event_id="one")
    event = WebhookEvent.objects.get()
    assert event.event_id == "one"
    assert event.signed_digest == webhooks._hmac(secret=secret, timestamp=stamp, body=body).hex()
    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookEvent.objects.create(account=event.account, event_id="two", signed_digest=event.signed_digest)
    # The same body signed at another second is another delivery (Prolific's own redelivery): stored.
    assert signed(client, secret, body, timestamp=str(int(stamp) - 1), event_id="one").json()["duplicate"] is False


def test_a_replay_after_the_tolerance_window_is_refused_and_stores_nothing(hooked, client, settings) -> None:  # noqa: F811
    _, secret = hooked
    body = b'{"resource_id": "x", "event_type": "study.status.change"}'
    stamp = str(int(time.time()) - 120)
    assert signed(client, secret, body, timestamp=stamp).status_code == 200
    settings.PLATFORM_WEBHOOK_TOLERANCE_SECONDS = 60  # the window has passed for that delivery
    assert_api_error(signed(client, secret, body, timestamp=stamp, event_id="new"), code="webhook_refused", status=403)
    settings.PLATFORM_WEBHOOK_TOLERANCE_SECONDS = 3600  # even with a wider window it is the same delivery
    assert signed(client, secret, body, timestamp=stamp, event_id="newer").json()["duplicate"] is True
    assert WebhookEvent.objects.count() == 1


@pytest.mark.parametrize("stamp", ["nan", "NaN", "inf", "-inf", "1e999", "abc", ""])
def test_a_timestamp_that_is_not_a_finite_number_is_refused_even_when_signed(hooked, client, stamp) -> None:  # noqa: F811
    _, secret = hooked
    response = signed(client, secret, b'{"resource_id": "x"}', timestamp=stamp)
    assert_api_error(response, code="webhook_refused", status=403)
    assert WebhookEvent.objects.count() == 0


def test_a_signed_body_nested_100000_deep_is_a_400_not_a_500(hooked, client) -> None:  # noqa: F811
    _, secret = hooked
    response = signed(client, secret, b"[" * 100_000, timestamp=str(int(time.time())))
    error = assert_api_error(response, code="parse_error", status=400)
    assert "nested deeper" in error["message"] and WebhookEvent.objects.count() == 0


def test_a_body_over_the_cap_is_refused_before_the_account_or_signature_is_looked_at(
        hooked, client, settings, monkeypatch) -> None:  # noqa: F811
    _, secret = hooked

    def no_signature(**_: object) -> bytes:
        raise AssertionError("the signature was computed for an oversized body")

    monkeypatch.setattr(webhooks, "_hmac", no_signature)
    big = b'{"pad": "' + b"x" * (settings.PLATFORM_WEBHOOK_MAX_BODY_BYTES + 10) + b'"}'
    for account in ("lab", "nobody"):
        response = client.post(f"/api/v1/platform-hooks/prolific/{account}/", data=big,
                               content_type="application/json", HTTP_X_PROLIFIC_REQUEST_SIGNATURE="AAAA",
                               HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=str(int(time.time())))
        assert_api_error(response, code="too_large", status=413)
    with pytest.raises(Exception, match="bytes refused unread"):  # the service holds the rule too, for any door
        webhooks.webhook_receive(account_name="lab", headers={}, body=big)
    assert WebhookEvent.objects.count() == 0


def test_the_door_reads_at_most_one_byte_past_the_cap(hooked, rf, settings) -> None:  # noqa: F811
    from platforms.api import _capped_body

    settings.PLATFORM_WEBHOOK_MAX_BODY_BYTES = 100
    request = rf.post("/api/v1/platform-hooks/prolific/lab/", data=b"y" * 5000, content_type="application/json")
    request.META["CONTENT_LENGTH"] = "50"  # a length that lies: the stream is still read only cap + 1 bytes
    assert len(_capped_body(type("R", (), {"META": request.META, "_request": request})())) <= 101


def test_a_flood_of_distinct_valid_events_is_rate_limited_per_account_and_none_is_lost(
        hooked, fake_prolific, client, inline, settings, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    _, secret = hooked
    settings.PLATFORM_WEBHOOK_PROCESS_RATE = "3/min"
    subs = [fake_prolific.add_submission("f" * 24, "e" * 24, status="RETURNED") for _ in range(10)]
    for n, sub in enumerate(subs):
        body = json.dumps({"resource_id": sub["id"], "event_type": "submission.status.change"}).encode()
        with django_capture_on_commit_callbacks(execute=True):
            assert signed(client, secret, body, timestamp=str(int(time.time())), event_id=f"e{n}").status_code == 200
    assert WebhookEvent.objects.count() == 10  # every event stored
    assert len(inline.queued) == 3 and len(fake_prolific.calls_to("GET", SUBMISSION_READ)) == 3  # within the rate
    assert webhooks_drain(older_than_seconds=0) == {"queued": 0, "waiting": 7}  # the window is spent
    while WebhookEvent.objects.filter(state=WebhookEvent.State.RECEIVED).exists():
        cache.clear()  # the next window
        assert webhooks_drain(older_than_seconds=0)["queued"] <= 3
    assert sorted(inline.queued) == sorted(WebhookEvent.objects.values_list("pk", flat=True))  # each once
    assert len(fake_prolific.calls_to("GET", SUBMISSION_READ)) == 10


@pytest.mark.django_db(transaction=True)
def test_simultaneous_copies_of_one_delivery_store_one_event(hooked) -> None:  # noqa: F811
    """The database's unique key on the signed digest holds when copies race past the lookup."""
    import threading

    from django.db import connection
    from django.test import Client

    _, secret = hooked
    body = b'{"resource_id": "x", "event_type": "study.status.change"}'
    stamp = str(int(time.time()))
    gate = threading.Barrier(8)
    answers: list[int] = []

    def send(n: int) -> None:
        try:
            gate.wait()
            answers.append(signed(Client(), secret, body, timestamp=stamp, event_id=f"race-{n}").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200] * 8 and WebhookEvent.objects.count() == 1
