"""Faults injected into benchmarks/load_annotation.py's flow (`--drop-db-connections`, `--broker-down-seconds`).

- The database drops its connections: every backend of the benchmark's own database is terminated
  (`pg_terminate_backend`, never another database's), N times, S seconds apart, while participants answer.
- The broker goes away: the server and a Celery worker (with its beat) use a Redis of the benchmark's own on a free
  port (never the shared one); it is stopped for S seconds while a researcher starts exports through the API, then
  started again (empty, as a restarted Redis without persistence is).

Then: how many requests answered 5xx, whether every acknowledged answer is stored once, whether every export job
ran exactly once.
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import requests

# The server's and the worker's connections carry this name (libpq's PGAPPNAME), so the drops end theirs, not the
# load generator's own (simulate_annotators reads the study too).
SERVER_APP = "stylecrowd-bench-server"
WORKER_SETTINGS = '''
from config.settings.test import *  # noqa: F401,F403

CELERY_BEAT_SCHEDULE = {"core-jobs-reap-stale": {"task": "core.jobs_reap_stale", "schedule": 30.0}}
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    """A Redis of this benchmark's own on 127.0.0.1:`port`, without persistence."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save",
                                         "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            try:
                if redis.Redis(port=self.port).ping():
                    return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


def drops_start(*, times: int, interval: float, delay: float) -> tuple[threading.Thread, list[int]]:
    """A thread that terminates the server's and the worker's connections to this database `times` times,
    `interval` s apart."""
    from django.db import connection

    counts: list[int] = []

    def run() -> None:
        time.sleep(delay)
        try:
            for _ in range(times):
                with connection.cursor() as cursor:
                    cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                                   "current_database() AND pid <> pg_backend_pid() AND application_name = %s",
                                   [SERVER_APP])
                    counts.append(cursor.fetchone()[0])
                time.sleep(interval)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, counts


def worker_start(*, env: dict[str, str], work: Path, root: Path, python: str) -> subprocess.Popen:
    """A Celery worker with its beat (the reaper every 30 s, as production) on the benchmark's broker."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "fault_worker_settings.py").write_text(WORKER_SETTINGS)
    return subprocess.Popen(
        [str(Path(python).parent / "celery"), "-A", "config", "worker", "-B", "-s", str(work / "beat"), "-l",
         "warning", "-c", "1", "-Q", "default", "--without-gossip", "--without-mingle"],
        cwd=root, env={**env, "DJANGO_SETTINGS_MODULE": "fault_worker_settings", "PGAPPNAME": SERVER_APP,
                       "PYTHONPATH": f"{work}{os.pathsep}{root}"},
        stdout=(work / "worker.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def researcher() -> tuple[str, str]:
    from django.contrib.auth.models import User

    name, password = f"bench-{secrets.token_hex(4)}", secrets.token_urlsafe(16)
    User.objects.create_superuser(name, password=password)
    return name, password


def broker_outage(*, base: str, broker: OwnRedis, seconds: float, exports: int, corpus: str,
                  delay: float) -> dict[str, Any]:
    """Stop the broker for `seconds`, start `exports` exports through the API meanwhile, start it again."""
    auth = researcher()
    time.sleep(delay)
    broker.stop()
    stopped = time.monotonic()
    statuses, jobs, waiting = [], [], 0
    for _ in range(exports):
        response = requests.post(f"{base}/api/v1/exports/", auth=auth, timeout=60,
                                 json={"format": "jsonl", "status": "all", "corpus": corpus})
        statuses.append(response.status_code)
        if response.status_code == 202:
            jobs.append(response.json()["job"]["id"])
            waiting += "could not be reached" in response.json()["job"]["message"]
        time.sleep(seconds / max(exports, 1))
    time.sleep(max(0.0, seconds - (time.monotonic() - stopped)))
    broker.start()
    return {"down_s": round(time.monotonic() - stopped, 1), "export_statuses": statuses, "jobs": jobs,
            "told_waiting": waiting}


def jobs_outcome(jobs: list[int], *, timeout: float) -> dict[str, Any]:
    """Wait for the jobs to finish; how many ran, were lost (never finished) or ran twice."""
    from core.models import Job
    from scoring.models import BenchmarkExport

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Job.objects.filter(pk__in=jobs).exclude(status__in=["done", "failed"]).exists():
            break
        time.sleep(1)
    rows = list(Job.objects.filter(pk__in=jobs).values_list("status", "attempts", "result"))
    made = [result.get("export") for _, _, result in rows if result.get("export")]
    return {"jobs": len(jobs), "done": sum(s == "done" for s, _, _ in rows),
            "lost": len(jobs) - sum(s in ("done", "failed") for s, _, _ in rows),
            "ran_twice": sum(a > 1 for _, a, _ in rows),
            "exports_stored": BenchmarkExport.objects.filter(pk__in=made).count()}


def answers_stored_once(study_id: int) -> dict[str, int]:
    """Stored answers, and (participant, item) pairs stored more than once (the unique constraint says 0)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM annotation_response WHERE study_id = %s", [study_id])
        stored = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM (SELECT 1 FROM annotation_response WHERE study_id = %s AND "
                       "study_item_id IS NOT NULL GROUP BY participant_id, study_item_id, question "
                       "HAVING count(*) > 1) d", [study_id])
        return {"responses_stored": stored, "duplicated": cursor.fetchone()[0]}


def faults_start(*, args: Any, env: dict[str, str], work: Path, tree: Path, python: str) -> dict[str, Any]:
    """Before the server starts: with --broker-down-seconds, the server's broker (and cache) is a Redis of the
    benchmark's own, served by a worker with its beat."""
    injected: dict[str, Any] = {"broker": None, "worker": None}
    if args.broker_down_seconds:
        injected["broker"] = broker = OwnRedis(free_port())
        broker.start()
        env["CELERY_BROKER_URL"] = env["CACHE_URL"] = broker.url
        injected["worker"] = worker_start(env=env, work=work, root=tree, python=python)
    return injected


def faults_inject(injected: dict[str, Any], *, args: Any, base: str, corpus: str) -> dict[str, Any]:
    """While the participants answer (halfway through the ramp-up, at least 2 s in)."""
    fault: dict[str, Any] = {}
    delay = max(args.ramp_up / 2, 2.0)
    if args.drop_db_connections:
        injected["dropper"], fault["db_drops"] = drops_start(times=args.drop_db_connections,
                                                             interval=args.drop_interval, delay=delay)
    if injected["broker"] is not None:
        fault["broker"] = broker_outage(base=base, broker=injected["broker"], seconds=args.broker_down_seconds,
                                        exports=args.exports, corpus=corpus, delay=delay)
    return fault


def faults_outcome(injected: dict[str, Any], fault: dict[str, Any], *, acknowledged: int | None,
                   study_id: int) -> None:
    if not fault:
        return
    if "dropper" in injected:
        injected["dropper"].join(timeout=120)
    if "broker" in fault:
        fault["broker"]["outcome"] = jobs_outcome(fault["broker"]["jobs"], timeout=120)
    fault["answers"] = {"acknowledged": acknowledged, **answers_stored_once(study_id)}


def faults_stop(injected: dict[str, Any]) -> None:
    if injected["worker"] is not None:
        os.killpg(injected["worker"].pid, signal.SIGTERM)
        injected["worker"].wait(timeout=60)
    if injected["broker"] is not None:
        injected["broker"].stop()
