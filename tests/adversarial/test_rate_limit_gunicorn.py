"""The session-creation limit holds across gunicorn workers: a real gunicorn (3 worker processes), the test
database, the limits counted in Redis. A per-process count would let each worker admit its own allowance."""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from annotation.models import Batch
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.slow  # a real gunicorn with three worker processes

ROOT = Path(settings.BASE_DIR)
LIMIT = 5


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn_url():
    db = connection.settings_dict
    port = _free_port()
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DJANGO_LOG_LEVEL": "ERROR",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CACHE_URL": settings.CACHES["default"]["LOCATION"], "CACHE_KEY_PREFIX": f"gunicorn-{secrets.token_hex(6)}",
        "ANNOTATION_SESSION_RATE_PER_ADDRESS": f"{LIMIT}/min", "ANNOTATION_SESSION_RATE_PER_STUDY": "100000/min",
    }
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--workers", "3",
         "--worker-class", "gthread", "--threads", "4", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/api/v1/ping/", timeout=10).status_code == 200:
                    break
            except requests.RequestException:  # not listening yet, or still loading Django
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start: {server.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        for _ in range(30):  # warm every worker (each imports Django on its first request)
            requests.get(f"{url}/api/v1/ping/db/", timeout=10)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.django_db(transaction=True)
def test_session_limit_is_shared_by_every_gunicorn_worker(gunicorn_url):
    study = make_study(n_instances=20, k=5, per_batch=2, slug="gunicorn-farm")

    def one(i: int) -> int:
        return requests.post(f"{gunicorn_url}/api/v1/studies/{study.slug}/sessions/",
                             json={"participant": f"bot-{i}", "platform": "anonymous"}, timeout=30).status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(one, range(60)))
    admitted = statuses.count(201)
    # One shared count: at most LIMIT per window (2 * LIMIT if the burst straddles a window's edge). Three
    # separate per-worker counts would admit about 3 * LIMIT per window.
    assert 1 <= admitted <= 2 * LIMIT and statuses.count(429) == 60 - admitted, statuses
    assert Batch.objects.filter(study=study).count() == admitted
