"""Real gunicorn for tests: the WSGI app in its own processes, on a random free port, against the test database.

Used where the behaviour depends on the real server (production settings, static files, how a body is read).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

REPO = Path(settings.BASE_DIR)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_database_url() -> str:
    """The database this test process writes to (pytest-django's test_<name>), as a URL for the server."""
    db = settings.DATABASES["default"]
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{host}:{port}/{connection.settings_dict['NAME']}"


@contextmanager
def gunicorn(*, settings_module: str, env: dict[str, str] | None = None, log: Path,
             workers: int = 2, threads: int = 4, ready_path: str = "/api/v1/ping/") -> Iterator[str]:
    """Starts gunicorn (gthread workers, as the README runs it) and yields its base URL; stops it afterwards."""
    port = free_port()
    full_env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "DATABASE_URL": server_database_url(),
        "DJANGO_LOG_LEVEL": "WARNING", **(env or {}),
    }
    full_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    log_file = log.open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--workers", str(workers),
         "--worker-class", "gthread", "--threads", str(threads), "--bind", f"127.0.0.1:{port}",
         "--timeout", "60", "--log-level", "warning"],
        cwd=REPO, env=full_env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {server.returncode}:\n{log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(base + ready_path, timeout=2).read()
                break
            except (OSError, urllib.error.HTTPError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not answer {ready_path}:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.3)
        yield base
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=20)
        log_file.close()
