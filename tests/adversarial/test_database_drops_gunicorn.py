"""The database drops its connections while participants work (a restart, a failover): real gunicorn with the
README's persistent connections (DJANGO_CONN_MAX_AGE=600), 40 participants starting, consenting (the general ORM
path) and answering through the hot path (`next` and `answers`), and every connection of the test database
terminated (`pg_terminate_backend`, this test's database only) again and again (2 s apart, as the attack run did)
while the requests are in flight. No participant sees a 5xx, and every answer is stored exactly once
(annotation/services/hot_path.py sends a statement once more on a new connection, core/db_retry.py runs a
participant's request once more; the claim and the unique constraint make that safe)."""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from django.db import connection
from django.db.models import Count

from annotation.models import Batch, Response
from tests.annotation.helpers import make_study
from tests.gunicorn_server import gunicorn

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PEOPLE = 40
PER_BATCH = 6
DROPS_AT_LEAST = 6
DROP_INTERVAL = 2.0  # the attack run's: 6 drops 2 s apart


def terminate_own_backends() -> int:
    """Ends every connection to this test's database but the one asking (never another database's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


def started(base: str, slug: str, n: int, log: list[tuple[str, int, str]]) -> str | None:
    """A participant past consent (the general ORM path, run once more when its connection was dropped:
    core/db_retry.py)."""
    session = requests.post(f"{base}/api/v1/studies/{slug}/sessions/",
                            json={"participant": f"DROP{n:03d}", "platform": "prolific"}, timeout=30)
    log.append(("session", session.status_code, ""))
    if session.status_code != 201:
        return None
    token = session.json()["token"]
    consent = requests.post(f"{base}/api/v1/sessions/{token}/consent/", json={"agree": True}, timeout=30)
    log.append(("consent", consent.status_code, ""))
    return token if consent.status_code == 200 else None


def participant(base: str, slug: str, n: int, log: list[tuple[str, int, str]]) -> None:
    """Starts, consents and answers the whole batch as the browser does (one request per item)."""
    rng = random.Random(n)
    time.sleep(rng.uniform(0, 10))  # arrivals spread over the drops
    token = started(base, slug, n, log)
    if token is None:
        return
    body = requests.get(f"{base}/api/v1/sessions/{token}/next/", timeout=30)
    log.append(("next", body.status_code, ""))
    following: Any = body.json() if body.status_code == 200 else None
    while following and following.get("item"):
        time.sleep(rng.uniform(0.05, 0.4))
        item = following["item"]
        response = requests.post(f"{base}/api/v1/sessions/{token}/answers/",
                                 json={"item": item["id"], "answer": item["choices"][0]}, timeout=60)
        log.append(("answer", response.status_code, item["id"]))
        following = response.json().get("next") if response.status_code in (200, 201) else None


def test_dropped_database_connections_cost_no_5xx_and_every_answer_is_stored_once(tmp_path: Path):
    study = make_study(n_instances=PEOPLE * PER_BATCH // 3 + 10, k=3, per_batch=PER_BATCH, slug="db-drops")
    env = {"DJANGO_CONN_MAX_AGE": "600", "ANNOTATION_SESSION_RATE_PER_ADDRESS": "100000/min",
           "ANNOTATION_SESSION_RATE_PER_STUDY": "100000/min"}
    log: list[tuple[str, int, str]] = []
    drops: list[int] = []
    with gunicorn(settings_module="config.settings.test", env=env, log=tmp_path / "gunicorn.log",
                  workers=2, threads=8) as base:
        done = threading.Event()

        def dropper() -> None:
            try:
                while not done.is_set() or len(drops) < DROPS_AT_LEAST:
                    time.sleep(DROP_INTERVAL)
                    drops.append(terminate_own_backends())
            finally:
                connection.close()  # this thread's own

        thread = threading.Thread(target=dropper)
        thread.start()
        try:
            with ThreadPoolExecutor(max_workers=PEOPLE) as pool:
                list(pool.map(lambda n: participant(base, study.slug, n, log), range(PEOPLE)))
        finally:
            done.set()
            thread.join(timeout=60)
        server_log = (tmp_path / "gunicorn.log").read_text()
    connection.close()  # this test's own connection may have been dropped by the last round
    errors = [entry for entry in log if entry[1] >= 500]
    assert len(drops) >= DROPS_AT_LEAST and sum(drops) >= DROPS_AT_LEAST, drops  # connections were dropped
    assert errors == [], (len(errors), errors[:5], server_log[-3000:])
    acknowledged = {item for kind, status, item in log if kind == "answer" and status == 201}
    assert len(acknowledged) == PEOPLE * PER_BATCH  # every participant answered the whole batch
    stored = Response.objects.filter(study=study)
    assert set(stored.values_list("reservation__public_id", flat=True)) == acknowledged
    assert stored.count() == len(acknowledged)  # none twice
    assert not stored.values("participant", "study_item").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert Batch.objects.filter(study=study, state=Batch.State.COMPLETED).count() == PEOPLE
