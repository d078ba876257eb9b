"""Load benchmark of the annotator API: N concurrent simulated participants against gunicorn + PostgreSQL.

Measures requests/s and p50/p95/p99 latency of `next` and `answers`, side by side with the ceiling of the same
stack (the trivial JSON views /api/v1/ping/ and /api/v1/ping/db/, same gunicorn, same client, same concurrency,
measured before and after the flow and averaged), then checks in SQL that no instance has more than k valid
responses.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_ann_bench .venv/bin/python benchmarks/load_annotation.py \
        --participants 200 --concurrency 200 --workers 3 --threads 8 --out benchmarks/out/load_annotation.json
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_ann_bench")
from benchmarks import faults  # noqa: E402 - after the checkout is on the path (run as a script)


def ensure_database(tree: Path, python: str) -> None:
    name = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], capture_output=True)
    subprocess.run([python, "manage.py", "migrate", "--noinput"], cwd=tree, check=True, capture_output=True)


def cpu_seconds(pids: list[str]) -> float:
    """User + system CPU seconds of these processes so far (those gone are left out)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / os.sysconf("SC_CLK_TCK")


def server_processes(master: int) -> dict[str, list[str]]:
    """gunicorn's master and workers, and the PostgreSQL backends connected to the benchmark database."""
    workers = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    database = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    backends = subprocess.run(["pgrep", "-f", f"postgres: .* {database} "], capture_output=True,
                              text=True).stdout.split()
    return {"gunicorn": [str(master), *workers], "postgres": backends}


def build_study(n_items: int, k: int, per_batch: int, screening: int) -> tuple[str, int]:
    import django

    django.setup()
    from annotation.services.studies import study_create
    from annotation.services.study_settings import study_settings_build
    from tasks.models import Corpus, ScreeningQuestion, StyleComponent, TaskInstance

    component = StyleComponent.objects.get(name="formality")
    slug = f"load-{int(time.time())}"
    corpus = Corpus.objects.create(name=slug, component=component, import_format=Corpus.Format.PAIRS)
    TaskInstance.objects.bulk_create([
        TaskInstance(stel_id=f"QQ_load-{i}", setup="quadruple", component=component, corpus=corpus, position=i,
                     family=f"{slug}-{i}", anchor_1=f"gonna be late lol {i}", anchor_2=f"I am going to be late {i}.",
                     sentence_1=f"I would appreciate your help {i}.", sentence_2=f"pls help me out {i}",
                     anchor_1_style=1, anchor_2_style=2, sentence_1_style=2, sentence_2_style=1,
                     correct_order="S2-S1")
        for i in range(n_items)
    ])
    for i in range(max(screening, 4)):
        ScreeningQuestion.objects.get_or_create(
            name=f"load-screen-{i}",
            defaults={"component": component, "anchor_1": "OH, REALLY?", "anchor_2": "Oh, is that so?",
                      "sentence_1": "Girlfriends is one of my favorite shows on television.",
                      "sentence_2": "GIRLFRIENDS IS ONE OF MY FAVORITE SHOWS.", "correct_order": "S2-S1"},
        )
    study = study_create(
        slug=slug, item_kind="quadruple", corpus=[slug], eligibility_questions=[],
        settings=study_settings_build(annotators_per_item=k, items_per_batch=per_batch, screening_per_batch=screening),
    )
    return slug, study.pk


async def hammer(url: str, concurrency: int, requests: int) -> tuple[float, list[float], dict[int, int]]:
    import aiohttp

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue = iter(range(requests))
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def worker() -> None:
            for _ in queue:
                started = time.perf_counter()
                try:
                    async with session.get(url) as response:
                        await response.read()
                        status = response.status
                except (aiohttp.ClientError, TimeoutError):
                    status = 599  # reset or timeout under load: counted, like the simulator does
                statuses[status] = statuses.get(status, 0) + 1
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies, statuses


def merge_status(runs: Any) -> dict[int, int]:
    merged: dict[int, int] = {}
    for statuses in runs:
        for code, n in statuses.items():
            merged[code] = merged.get(code, 0) + n
    return merged


def pct(values: list[float]) -> dict[str, float]:
    ms = np.asarray(values) * 1000
    return {"n": len(values), "p50_ms": round(float(np.percentile(ms, 50)), 1),
            "p95_ms": round(float(np.percentile(ms, 95)), 1), "p99_ms": round(float(np.percentile(ms, 99)), 1)}


def wait_for(url: str, timeout: float = 30) -> None:
    import urllib.request

    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"gunicorn did not answer {url}")


def sql_over_capacity(study_id: int) -> list[tuple[int, int]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT r.study_item_id, COUNT(DISTINCT r.participant_id)
            FROM annotation_response r JOIN annotation_study s ON s.id = r.study_id
            WHERE r.study_id = %s AND r.is_valid AND r.study_item_id IS NOT NULL
            GROUP BY r.study_item_id, s.annotators_per_item
            HAVING COUNT(DISTINCT r.participant_id) > s.annotators_per_item
            """,
            [study_id],
        )
        return cursor.fetchall()


def profile_worker(master: int, *, delay: float, seconds: float, out: Path) -> None:
    """py-spy on one gunicorn worker (a child of the master) for `seconds`, as collapsed stacks with thread and
    idle frames, after `delay` seconds of the flow."""
    time.sleep(delay)
    workers = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    if not workers:
        print("no gunicorn worker to profile", file=sys.stderr)
        return
    spy = Path(sys.executable).parent / "py-spy"
    subprocess.run([str(spy), "record", "--pid", workers[0], "--duration", str(int(seconds)), "--rate", "200",
                    "--format", "raw", "--output", str(out), "--nonblocking"], capture_output=True, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--per-batch", type=int, default=14)
    parser.add_argument("--screening", type=int, default=2)
    parser.add_argument("--screen-fail", type=float, default=0.05)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--ping-requests", type=int, default=8000)
    parser.add_argument("--think-time", type=float, default=0.0,
                        help="Mean seconds a simulated participant spends per item (0: as fast as possible).")
    parser.add_argument("--ramp-up", type=float, default=0.0, help="Seconds over which participants arrive.")
    parser.add_argument("--session-rate-per-address", default="1000000/min",
                        help="ANNOTATION_SESSION_RATE_PER_ADDRESS for the server: every simulated participant "
                             "comes from 127.0.0.1, so the production default (20/min) would throttle the load.")
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--server-side-binding", action="store_true",
                        help="Let psycopg prepare repeated statements (Django's server_side_binding option).")
    parser.add_argument("--profile-client", default="",
                        help="Write a cProfile of the load generator (simulate_annotators) to this path.")
    parser.add_argument("--ask-next", action="store_true",
                        help="Simulated clients call `next` after every answer (two requests per item, as before the "
                             "answer carried the next item).")
    parser.add_argument("--profile-server", type=float, default=0.0, metavar="SECONDS",
                        help="Record one gunicorn worker with py-spy for this many seconds, starting halfway "
                             "through the ramp-up; the collapsed stacks go next to --out (.pyspy.txt).")
    parser.add_argument("--tree", default=str(ROOT),
                        help="Serve (gunicorn) and play (simulate_annotators) the code of this worktree with its own "
                             ".venv, e.g. a checkout of the code before a change; this script measures both alike.")
    parser.add_argument("--drop-db-connections", type=int, default=0, metavar="N",
                        help="Fault: terminate every connection to the benchmark's database N times during the flow "
                             "(benchmarks/faults.py).")
    parser.add_argument("--drop-interval", type=float, default=2.0, help="Seconds between two drops.")
    parser.add_argument("--broker-down-seconds", type=float, default=0.0,
                        help="Fault: the broker (a Redis of the benchmark's own, with a Celery worker and beat) is "
                             "stopped this long during the flow while a researcher starts --exports exports.")
    parser.add_argument("--exports", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "load_annotation.json"))
    args = parser.parse_args()

    load_before = os.getloadavg()
    tree = Path(args.tree).resolve()
    python = str(tree / ".venv" / "bin" / "python") if tree != ROOT else sys.executable
    ensure_database(tree, python)
    # The study is built by the served tree's own code (its models may differ from this one's).
    built = subprocess.run(
        [python, "-c", "import json, sys; sys.path.insert(0, '.'); from benchmarks.load_annotation import build_study; "
         f"print(json.dumps(build_study({args.items}, {args.k}, {args.per_batch}, {args.screening})))"],
        cwd=tree, env=os.environ, capture_output=True, text=True, check=True)
    slug, study_id = json.loads(built.stdout.strip().splitlines()[-1])
    import django

    django.setup()
    env = {**os.environ, "DJANGO_CONN_MAX_AGE": "600", "DJANGO_LOG_LEVEL": "ERROR",
           "ANNOTATION_SESSION_RATE_PER_ADDRESS": args.session_rate_per_address,
           "ANNOTATION_SESSION_RATE_PER_STUDY": os.environ.get("ANNOTATION_SESSION_RATE_PER_STUDY", "1000000/min"),
           # every simulated participant comes from 127.0.0.1
           "ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS": os.environ.get("ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS", "0")}
    if args.server_side_binding:
        # psycopg binds on the server and prepares a statement after 5 runs on a connection: no re-planning.
        separator = "&" if "?" in env["DATABASE_URL"] else "?"
        env["DATABASE_URL"] += f"{separator}server_side_binding=true"
    base = f"http://127.0.0.1:{args.port}"
    injected = faults.faults_start(args=args, env=env, work=Path(args.out).parent / "faults", tree=tree,
                                   python=python)
    server = subprocess.Popen(
        [str(Path(python).parent / "gunicorn"), "config.wsgi:application", "--workers", str(args.workers),
         "--worker-class", "gthread", "--threads", str(args.threads), "--bind", f"127.0.0.1:{args.port}",
         "--backlog", "2048", "--timeout", "120", "--keep-alive", "30", "--log-level", "warning"],
        cwd=tree, env={**env, "PGAPPNAME": faults.SERVER_APP},
    )
    try:
        wait_for(base + "/api/v1/ping/")
        asyncio.run(hammer(base + "/api/v1/ping/", 20, 500))  # warm every worker
        asyncio.run(hammer(base + "/api/v1/ping/db/", 20, 500))
        # The ceilings are measured before and after the annotation flow and averaged: the speed of a shared
        # virtual machine drifts by ±10 % over a minute, more than the difference we want to see.
        ceilings = {"ping": [], "ping_db": []}

        def measure_ceilings() -> None:
            for name, path in (("ping", "/api/v1/ping/"), ("ping_db", "/api/v1/ping/db/")):
                half = max(args.ping_requests // 2, 1)
                ceilings[name].append(asyncio.run(hammer(base + path, args.concurrency, half)))

        measure_ceilings()
        latencies_file = Path(args.out).with_suffix(".latencies.json")
        latencies_file.parent.mkdir(parents=True, exist_ok=True)
        profile = ["-m", "cProfile", "-o", args.profile_client] if args.profile_client else []
        processes = server_processes(server.pid)
        cpu_before = {name: cpu_seconds(pids) for name, pids in processes.items()}
        client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        sim = subprocess.Popen(
            [python, *profile, "manage.py", "simulate_annotators", "--study", slug, "--participants",
             str(args.participants), "--concurrency", str(args.concurrency), "--accuracy", "0.85", "--screen-fail",
             str(args.screen_fail), "--base-url", base, "--latencies-out", str(latencies_file),
             "--think-time", str(args.think_time), "--ramp-up", str(args.ramp_up),
             *(["--ask-next"] if args.ask_next else [])],
            cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        fault = faults.faults_inject(injected, args=args, base=base, corpus=slug)
        if args.profile_server:
            profile_worker(server.pid, delay=max(args.ramp_up / 2, 1.0), seconds=args.profile_server,
                           out=Path(args.out).with_suffix(".pyspy.txt"))
        stdout, stderr = sim.communicate()
        processes = server_processes(server.pid)  # backends opened during the flow too (persistent connections)
        cpu_flow = {name: round(cpu_seconds(pids) - cpu_before.get(name, 0.0), 2) for name, pids in processes.items()}
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_flow["client"] = round(client_after.ru_utime - client_before.ru_utime
                                   + client_after.ru_stime - client_before.ru_stime, 2)
        if sim.returncode:
            raise SystemExit(f"simulate_annotators failed:\n{stdout[-3000:]}\n{stderr[-3000:]}")
        summary = json.loads(stdout.strip().splitlines()[-1])
        faults.faults_outcome(injected, fault, acknowledged=summary.get("answers_stored"), study_id=study_id)
        measure_ceilings()
    finally:
        server.terminate()
        server.wait(timeout=30)
        faults.faults_stop(injected)
    latencies = json.loads(latencies_file.read_text())
    ping_elapsed = sum(run[0] for run in ceilings["ping"])
    ping_lat = [x for run in ceilings["ping"] for x in run[1]]
    ping_status = merge_status(run[2] for run in ceilings["ping"])
    db_elapsed = sum(run[0] for run in ceilings["ping_db"])
    db_lat = [x for run in ceilings["ping_db"] for x in run[1]]
    db_status = merge_status(run[2] for run in ceilings["ping_db"])
    ping_rps = len(ping_lat) / ping_elapsed
    db_rps = len(db_lat) / db_elapsed
    ping_runs = [round(len(run[1]) / run[0], 1) for run in ceilings["ping"]]
    db_runs = [round(len(run[1]) / run[0], 1) for run in ceilings["ping_db"]]
    result = {
        "command": " ".join(sys.argv),
        "participants": args.participants, "concurrency": args.concurrency, "items": args.items, "k": args.k,
        "gunicorn": {"workers": args.workers, "threads": args.threads, "worker_class": "gthread"},
        "server_side_binding": args.server_side_binding,
        "ceiling_ping": {"requests": len(ping_lat), "elapsed_s": round(ping_elapsed, 2), "rps": round(ping_rps, 1),
                         "rps_before_after": ping_runs, **pct(ping_lat), "status": ping_status},
        "ceiling_ping_db": {"requests": len(db_lat), "elapsed_s": round(db_elapsed, 2), "rps": round(db_rps, 1),
                            "rps_before_after": db_runs, **pct(db_lat), "status": db_status},
        "ask_next": args.ask_next, "load_average_before": load_before,
        "think_time_s": args.think_time, "ramp_up_s": args.ramp_up,
        "session_rate_per_address": args.session_rate_per_address,
        "annotation": {
            "elapsed_s": summary["elapsed_s"], "requests": summary["requests"], "rps": summary["requests_per_s"],
            "answers_stored": summary.get("answers_stored"), "errors": summary.get("errors", 0),
            "batches_completed": summary.get("batches_completed"),
            "next": {**pct(latencies["next"]), "status": summary["endpoints"]["next"]["status"]},
            "answers": {**pct(latencies["answers"]), "status": summary["endpoints"]["answers"]["status"]},
            "all_endpoints": summary["endpoints"],
        },
        "throughput_vs_ceiling": round(summary["requests_per_s"] / ping_rps, 3),
        "throughput_vs_db_ceiling": round(summary["requests_per_s"] / db_rps, 3),
        "sql_items_over_k": sql_over_capacity(study_id),
        "tree": str(tree),
        # CPU seconds the flow cost (gunicorn, its PostgreSQL backends, the load generator), and per stored answer:
        # unlike latency, this hardly moves with what else runs on the machine.
        "cpu_flow_s": cpu_flow,
        "cpu_ms_per_answer": {name: round(1000 * value / max(summary.get("answers_stored") or 1, 1), 3)
                              for name, value in cpu_flow.items()},
        "answers_per_server_cpu_second": round((summary.get("answers_stored") or 0)
                                               / max(cpu_flow["gunicorn"] + cpu_flow["postgres"], 1e-9), 1),
        "load_average_after": os.getloadavg(),
        "faults": fault,
    }
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
