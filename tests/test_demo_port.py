"""`make demo` serves on $PORT when it is set, else on 8000, else (8000 taken) on a free port that it prints; a
PORT already in use is refused naming it (before: runserver on 8000 whatever PORT said, failing when it was taken).
Runs `make serve-demo` (what `make demo` ends with, without building the demo data)."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

REPO = Path(settings.BASE_DIR)
pytestmark = pytest.mark.slow


@contextmanager
def taken(port: int) -> Iterator[None]:
    """Something listens on `port` (if something else already does, it stays taken all the same)."""
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", port))
        holder.listen()
    except OSError:
        pass
    try:
        yield
    finally:
        holder.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(["make", "--no-print-directory", "serve-demo"], cwd=REPO, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Serving StyleCrowd on"):
            break
    return process, "".join(lines)


def answers(url: str, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return urllib.request.urlopen(url, timeout=2).status == 200
        except OSError:
            time.sleep(0.3)
    return False


def stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def test_make_demo_picks_a_free_port_when_8000_is_taken_and_honours_port() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PORT"}
    with taken(8000):
        process, said = serve(env)
        try:
            shown = re.search(r"Serving StyleCrowd on http://127\.0\.0\.1:(\d+)/admin/", said)
            assert shown and shown.group(1) != "8000", said
            assert f"Port 8000 is taken: serving on {shown.group(1)} instead" in said
            assert answers(f"http://127.0.0.1:{shown.group(1)}/api/v1/ping/")
        finally:
            stop(process)

    busy = free_port()
    with taken(busy):
        refused = subprocess.run(["make", "--no-print-directory", "serve-demo"], cwd=REPO, text=True,
                                 env={**env, "PORT": str(busy)}, capture_output=True, timeout=60)
    assert refused.returncode != 0
    assert f"PORT={busy}: something already listens on 127.0.0.1:{busy}" in refused.stdout + refused.stderr

    chosen = free_port()
    process, said = serve({**env, "PORT": str(chosen)})
    try:
        assert f"Serving StyleCrowd on http://127.0.0.1:{chosen}/admin/" in said
        assert answers(f"http://127.0.0.1:{chosen}/api/v1/ping/")
    finally:
        stop(process)
