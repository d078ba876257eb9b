"""In-process cost of each participant endpoint through the full Django stack (WSGI handler, middleware, views,
PostgreSQL), one participant at a time: no HTTP server, no concurrency, no load generator. What the load
benchmark's server pays per request before any queueing: wall time (including the waits for PostgreSQL and for
the WAL flush of a commit) and the Python CPU time of the request's thread.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_ann_bench .venv/bin/python \
        benchmarks/participant_api_inprocess.py --participants 60 [--profile next|answers]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_ann_bench")
os.environ.setdefault("DJANGO_CONN_MAX_AGE", "600")

from benchmarks.load_annotation import build_study, ensure_database  # noqa: E402


class Wsgi:
    """Calls the WSGI application directly, as gunicorn would, and times each call."""

    def __init__(self) -> None:
        from django.core.wsgi import get_wsgi_application

        self.app = get_wsgi_application()
        self.times: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.profiler = cProfile.Profile()
        self.profiled: str | None = None  # the endpoint whose calls the profiler records

    def call(self, endpoint: str, method: str, path: str, body: object = None) -> tuple[int, dict]:
        if endpoint == self.profiled:
            self.profiler.enable()
        try:
            return self._call(endpoint, method, path, body)
        finally:
            self.profiler.disable()

    def _call(self, endpoint: str, method: str, path: str, body: object = None) -> tuple[int, dict]:
        raw = json.dumps(body).encode() if body is not None else b""
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(raw), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
            "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False,
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(raw)), "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1",
        }
        status: list[str] = []
        started, cpu_started = time.perf_counter(), time.thread_time()
        chunks = self.app(environ, lambda s, h, exc_info=None: status.append(s))
        data = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        self.times.setdefault(endpoint, []).append(time.perf_counter() - started)
        self.cpu.setdefault(endpoint, []).append(time.thread_time() - cpu_started)
        if int(status[0].split()[0]) >= 500:
            raise RuntimeError(data[:3000])
        return int(status[0].split()[0]), json.loads(data or b"null")


def participant_run(client: Wsgi, *, slug: str, index: int, rng: random.Random) -> None:
    """One participant through the session: arrival, consent, start, then every item answered."""
    from annotation.selectors import reservation_expected_answer, reservation_is_screening

    status, session = client.call("sessions", "POST", f"/api/v1/studies/{slug}/sessions/",
                                  {"participant": f"inproc-{index}", "platform": "prolific"})
    assert status == 201, session
    token = session["token"]
    fails_screening = rng.random() < 0.05
    client.call("consent", "POST", f"/api/v1/sessions/{token}/consent/", {"agree": True})
    client.call("start", "POST", f"/api/v1/sessions/{token}/start/")
    while True:
        status, body = client.call("next", "GET", f"/api/v1/sessions/{token}/next/")
        assert status == 200, body
        if body["item"] is None:
            break
        # As in the load benchmark: 85 % right, and 5 % of the participants answer screening questions wrongly.
        expected = reservation_expected_answer(public_id=body["item"]["id"])
        wrong = [c for c in body["item"]["choices"] if c != expected]
        is_screening = reservation_is_screening(public_id=body["item"]["id"])
        right = (not fails_screening) if is_screening else rng.random() < 0.85
        status, result = client.call("answers", "POST", f"/api/v1/sessions/{token}/answers/",
                                     {"item": body["item"]["id"], "answer": expected if right else wrong[0]})
        assert status in (200, 201), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=60)
    parser.add_argument("--profile", choices=["sessions", "consent", "start", "next", "answers"], default=None)
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--items", type=int, default=2000, help="Instances in the study (start scans them).")
    args = parser.parse_args()

    ensure_database(ROOT, sys.executable)
    slug, _ = build_study(args.items, 5, 14, 2)
    client = Wsgi()
    client.profiled = args.profile
    rng = random.Random(1)
    for _ in range(200):  # warm up: imports, URL resolver, connections, statement caches
        client.call("ping_warm", "GET", "/api/v1/ping/")
        client.call("ping_db_warm", "GET", "/api/v1/ping/db/")
    for i in range(args.participants):
        participant_run(client, slug=slug, index=i, rng=rng)
    for _ in range(500):
        client.call("ping", "GET", "/api/v1/ping/")
        client.call("ping_db", "GET", "/api/v1/ping/db/")
    summary = {
        endpoint: {"n": len(values), "mean_ms": round(float(np.mean(values)) * 1000, 3),
                   "p50_ms": round(float(np.percentile(values, 50)) * 1000, 3),
                   "python_cpu_ms": round(float(np.mean(client.cpu[endpoint])) * 1000, 3)}
        for endpoint, values in client.times.items() if not endpoint.endswith("_warm")
    }
    if args.profile:
        out = io.StringIO()
        stats = pstats.Stats(client.profiler, stream=out).sort_stats(os.environ.get("PROFILE_SORT", "cumulative"))
        stats.print_stats(args.top)
        if os.environ.get("PROFILE_CALLERS"):
            stats.print_callers(os.environ["PROFILE_CALLERS"])
        print(out.getvalue())
    print(json.dumps({"participants": args.participants, "per_request": summary}))


if __name__ == "__main__":
    main()
