"""Prolific's webhooks: set up once (secret, subscription, confirmation), every delivery checked (signature, fresh
timestamp), recorded once under what Prolific signed (the replay findings: test_webhooks_replay.py), and processed
like a sync."""
from __future__ import annotations

import json
import time

import pytest

from annotation.models import Batch
from platforms.models import PlatformAccount, PlatformSubmission, WebhookEvent
from platforms.services.webhooks import webhook_event_process, webhook_setup, webhook_signature
from tests import factories as f
from tests.helpers import assert_api_error
from tests.platforms.conftest import on_prolific, paid_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def hooked(prolific_account, fake_prolific):  # noqa: ANN001, ANN201
    summary = webhook_setup(account=prolific_account, target_url="https://crowd.example.org/api/v1/platform-hooks/"
                                                                 "prolific/lab/")
    prolific_account.refresh_from_db()
    secret = fake_prolific.secrets[prolific_account.workspace_id]
    return summary, secret


def deliver(client, secret: str, payload: dict, *, event_id: str = "ev-1", when: float | None = None,  # noqa: ANN001
            signature: str | None = None, account: str = "lab"):  # noqa: ANN201
    body = json.dumps(payload).encode()
    timestamp = str(int(when if when is not None else time.time()))
    sig = signature if signature is not None else webhook_signature(secret=secret, timestamp=timestamp, body=body)
    return client.post(f"/api/v1/platform-hooks/prolific/{account}/", data=body, content_type="application/json",
                       HTTP_X_PROLIFIC_REQUEST_SIGNATURE=sig, HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
                       HTTP_X_EVENT_ID=event_id)


def test_setup_creates_the_secret_subscribes_and_confirms(hooked, fake_prolific, prolific_account) -> None:
    summary, secret = hooked
    sub = fake_prolific.subscriptions[summary["subscription"]]
    assert sub["is_enabled"] and sub["event_type"] == "submission.status.change"
    assert secret not in prolific_account.webhook_secret_encrypted  # stored encrypted


def test_a_signed_delivery_is_recorded_once_and_frees_slots(hooked, fake_prolific, prolific_account, client) -> None:
    _, secret = hooked
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    leaver = f.ParticipantFactory(study=study, external_id="c" * 24)
    sub = fake_prolific.add_submission(ps.external_id, leaver.external_id, status="RETURNED")
    Batch.objects.create(study=study, participant=leaver, number=1, token="w" * 40, state="consent",
                         session_ref=sub["id"])
    payload = {"resource_id": sub["id"], "event_type": "submission.status.change",
               "participant_id": leaver.external_id, "status": "RETURNED"}
    now = time.time()
    first = deliver(client, secret, payload, when=now)
    again = deliver(client, secret, payload, when=now, event_id="ev-2")  # the same signed delivery, sent again
    assert first.status_code == again.status_code == 200
    assert first.json() == {"received": True, "duplicate": False} and again.json()["duplicate"] is True
    assert WebhookEvent.objects.count() == 1
    event = WebhookEvent.objects.get()
    result = webhook_event_process(event_id=event.pk)
    assert result["processed"] and not webhook_event_process(event_id=event.pk)["processed"]  # once
    assert PlatformSubmission.objects.get(external_id=sub["id"]).status == "RETURNED"
    assert Batch.objects.get(participant=leaver).state == Batch.State.EXPIRED


def test_a_bad_signature_is_refused_and_nothing_recorded(hooked, client) -> None:
    _, secret = hooked
    payload = {"resource_id": "x", "event_type": "submission.status.change", "status": "RETURNED"}
    assert_api_error(deliver(client, secret, payload, signature="AAAA"), code="webhook_refused", status=403)
    assert_api_error(deliver(client, "another-secret", payload), code="webhook_refused", status=403)
    assert_api_error(deliver(client, secret, payload, account="nobody"), code="webhook_refused", status=403)
    assert WebhookEvent.objects.count() == 0


def test_a_stale_delivery_is_refused(hooked, client) -> None:
    _, secret = hooked
    payload = {"resource_id": "x", "event_type": "submission.status.change", "status": "RETURNED"}
    response = deliver(client, secret, payload, when=time.time() - 3600)
    assert_api_error(response, code="webhook_refused", status=403)
    assert "Stale" in response.json()["error"]["message"] and WebhookEvent.objects.count() == 0


def test_a_delivery_without_an_event_id_is_keyed_by_its_signature(hooked, client) -> None:
    _, secret = hooked
    payload = {"resource_id": "y", "event_type": "study.status.change", "status": "ACTIVE"}
    now = time.time()
    assert deliver(client, secret, payload, event_id="", when=now).json()["duplicate"] is False
    assert deliver(client, secret, payload, event_id="", when=now).json()["duplicate"] is True
    event = WebhookEvent.objects.get()
    assert event.event_id == "" and len(event.signed_digest) == 64
    assert webhook_event_process(event_id=event.pk)["ignored"] == "study.status.change"


def test_an_event_of_a_study_that_is_not_ours_is_ignored(hooked, fake_prolific, client) -> None:
    _, secret = hooked
    stranger = fake_prolific.add_submission("f" * 24, "e" * 24, status="APPROVED")
    deliver(client, secret, {"resource_id": stranger["id"], "event_type": "submission.status.change",
                             "status": "APPROVED"})
    result = webhook_event_process(event_id=WebhookEvent.objects.get().pk)
    assert result["ignored"] == "not a study of ours"
    assert WebhookEvent.objects.get().state == WebhookEvent.State.IGNORED


def test_setup_needs_https(prolific_account) -> None:
    from core.errors import ApplicationError

    with pytest.raises(ApplicationError, match="https"):
        webhook_setup(account=prolific_account, target_url="http://crowd.example.org/hook/")
    assert not PlatformAccount.objects.get().webhook_secret_encrypted
