"""The platform jobs and webhook events run by a real Celery worker process on Redis: a delivery answered at once is
processed by the worker (slots freed), and a bonus queued twice through the API, while the worker runs, pays once."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from django.conf import settings

from annotation.models import Batch
from core.models import Job
from platforms.models import BonusPayment, WebhookEvent
from platforms.services.webhooks import webhook_setup, webhook_signature
from tests import factories as f
from tests.platforms.conftest import on_prolific, paid_study
from tests.scoring.agreement.test_runs_worker import broker_db_emptied, kill_group, start_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]
PAY = r"/api/v1/bulk-bonus-payments/\w+/pay/"


def test_a_worker_processes_webhooks_and_pays_a_doubly_queued_bonus_once(
        prolific_account, fake_prolific, api, client, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STYLECROWD_ENCRYPTION_KEY", settings.STYLECROWD_ENCRYPTION_KEY)
    broker_db_emptied()
    webhook_setup(account=prolific_account, target_url="https://crowd.example.org/api/v1/platform-hooks/prolific/lab/")
    secret = fake_prolific.secrets[prolific_account.workspace_id]
    study = paid_study()
    ps = on_prolific(study, prolific_account, fake_prolific)
    leaver = f.ParticipantFactory(study=study, external_id="c" * 24)
    sub = fake_prolific.add_submission(ps.external_id, leaver.external_id, status="RETURNED")
    Batch.objects.create(study=study, participant=leaver, number=1, token="v" * 40, state="consent",
                         session_ref=sub["id"])
    worker = start_worker(tmp_path, "platform-worker")
    log = tmp_path / "platform-worker.log"
    try:
        body = json.dumps({"resource_id": sub["id"], "event_type": "submission.status.change",
                           "participant_id": leaver.external_id, "status": "RETURNED"}).encode()
        stamp = str(int(time.time()))
        started = time.monotonic()
        response = client.post("/api/v1/platform-hooks/prolific/lab/", data=body, content_type="application/json",
                               HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhook_signature(secret=secret, timestamp=stamp,
                                                                                   body=body),
                               HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=stamp, HTTP_X_EVENT_ID="evt-123")
        assert response.status_code == 200 and time.monotonic() - started < 2  # answered at once
        wait_for(lambda: WebhookEvent.objects.filter(state=WebhookEvent.State.PROCESSED).exists(), timeout=120,
                 what="the worker to process the event", log=log)
        wait_for(lambda: Batch.objects.get(participant=leaver).state == Batch.State.EXPIRED, timeout=60,
                 what="the slots to be freed", log=log)

        jobs = [api.post(f"/api/v1/studies/{study.slug}/platform/bonuses/", {"apply": True, "flat": "0.20"},
                         format="json").json()["job"]["id"] for _ in range(2)]
        done = wait_for(lambda: all(Job.objects.get(pk=j).finished for j in jobs) and jobs,
                        timeout=180, what="both bonus jobs", log=log)
        assert done
    finally:
        kill_group(worker)
    assert [Job.objects.get(pk=j).status for j in jobs] == ["done", "done"], [Job.objects.get(pk=j).error
                                                                               for j in jobs]
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert sorted(p["amount"] for p in fake_prolific.payments) == [0.2, 0.2, 0.2]
    assert BonusPayment.objects.filter(state="paid").count() == 3
    assert "platforms.job" in log.read_text() and "platforms.webhook_event_process" in log.read_text()
