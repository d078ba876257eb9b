"""How long the developer's loops take: `make test-fast` (the lane without worker, browser, model or slow tests, in
one process per core) and the start of one management command (what every CLI call, Celery worker and gunicorn
worker pays before doing anything).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_main .venv/bin/python benchmarks/test_lanes.py --runs 3

Each run is timed from the outside (wall clock, as a developer waits) and pytest's own figure is kept beside it.
The last line of standard output is a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAST_LANE = ["-n", "auto", "-m", "not worker and not browser and not model and not slow", "-q"]  # as the Makefile


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str, int]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout + done.stderr, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of the fast lane (default 3)")
    parser.add_argument("--starts", type=int, default=5, help="timed `manage.py check` starts (default 5)")
    args = parser.parse_args()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    python = sys.executable

    starts = []
    for index in range(args.starts):
        seconds, output, code = timed([python, "manage.py", "check"], env)
        if code:
            print(output, file=sys.stderr)
            return 1
        starts.append(seconds)
        print(f"manage.py check #{index + 1}: {seconds:.2f} s", file=sys.stderr)

    runs = []
    for index in range(args.runs):
        load = os.getloadavg()[0]
        seconds, output, code = timed([python, "-m", "pytest", *FAST_LANE], env)
        summary = re.search(r"(\d+) passed.* in ([\d.]+)s", output)
        if code or summary is None:
            print(output[-3000:], file=sys.stderr)
            return 1
        runs.append({"wall_s": round(seconds, 1), "pytest_s": float(summary.group(2)),
                     "passed": int(summary.group(1)), "load_before": round(load, 2)})
        print(f"fast lane #{index + 1}: {seconds:.1f} s wall, pytest {summary.group(2)} s, "
              f"{summary.group(1)} passed (load {load:.2f} before)", file=sys.stderr)

    print(json.dumps({
        "ok": True, "cpus": os.cpu_count(),
        "manage_py_check_s": {"median": round(statistics.median(starts), 2), "min": round(min(starts), 2)},
        "fast_lane": {"median_wall_s": statistics.median(r["wall_s"] for r in runs),
                      "median_pytest_s": statistics.median(r["pytest_s"] for r in runs), "runs": runs},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
