"""Where the test suite's CPU goes, across every process it starts: pytest, its live servers, gunicorn, Celery
workers, Chromium, PostgreSQL's backends.

`--durations` shows a test's wall time, which on 2 shared cores says little about what the test costs. This runs
pytest with a plugin (this module, `-p benchmarks.suite_cpu`) and a sampler beside it:

- the machine's busy CPU (`/proc/stat`: every process, the servers' and browsers' included) around each test, valid
  when the tests run one at a time (`--workers 0`, the default): a test's row is then what the machine spent on it;
- each process's CPU by class (postgres, chromium, gunicorn, celery, schemathesis' `st`, the pytest processes, ...),
  read from `/proc/<pid>/stat` every half second: a process that lives less than that can be missed, and what was missed
  is reported as `unattributed`.

    .venv/bin/python benchmarks/suite_cpu.py --out /tmp/suite_cpu               # the whole suite, one process
    .venv/bin/python benchmarks/suite_cpu.py --workers 3 --out /tmp/suite_cpu    # as make test runs it
    .venv/bin/python benchmarks/suite_cpu.py --out /tmp/x -- tests/core/test_roles_matrix.py --reuse-db

It writes `tests.jsonl` (one row per test: wall, busy, the pytest process's own CPU, lane) and `summary.json` to
`--out`, prints the costliest modules, lanes and process classes, and ends with a JSON summary line. The budget line
compares the busy CPU with what 2 cores give in `--budget-seconds` (360: issue 29's 6 minutes).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HZ = os.sysconf("SC_CLK_TCK")
LANES = ("browser", "worker", "model", "slow")  # the markers of pytest.ini, first match wins


def machine_cpu() -> tuple[float, float]:
    """(busy, idle) CPU-seconds of the whole machine since boot; idle is idle and iowait, busy all the rest."""
    with open("/proc/stat", encoding="ascii") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / HZ, idle / HZ


# --- the pytest plugin ---------------------------------------------------------------------------------------------


class _Recorder:
    def __init__(self, path: Path) -> None:
        self.handle = path.open("w", encoding="utf-8")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        own = resource.getrusage(resource.RUSAGE_SELF)
        busy, wall = machine_cpu()[0], time.monotonic()
        yield
        after = resource.getrusage(resource.RUSAGE_SELF)
        lane = next((name for name in LANES if item.get_closest_marker(name)), "fast")
        self.handle.write(json.dumps({
            "id": item.nodeid, "lane": lane, "wall": round(time.monotonic() - wall, 3),
            "busy": round(machine_cpu()[0] - busy, 3),
            "self": round(after.ru_utime + after.ru_stime - own.ru_utime - own.ru_stime, 3)}) + "\n")
        self.handle.flush()


def pytest_configure(config: Any) -> None:
    out = os.environ.get("SUITE_CPU_TESTS")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        config.pluginmanager.register(_Recorder(Path(f"{out}.{worker}")), "suite-cpu-recorder")


# --- the sampler ---------------------------------------------------------------------------------------------------


def process_class(pid: str) -> str | None:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    head = command[:80]
    rules = [("postgres", "postgres" in name or "postgres" in head), ("chromium", "chrom" in name or "chrom" in head),
             ("playwright driver (node)", name == "node" or "playwright" in command),
             ("gunicorn", "gunicorn" in command), ("celery", "celery" in command),
             ("schemathesis st", "/bin/st " in command), ("redis", "redis" in name), ("nginx", "nginx" in name),
             ("pytest (xdist process)", "execnet" in command or command.startswith(f"{sys.executable} -u -c")),
             ("pytest", "pytest" in command), ("manage.py", "manage.py" in command),
             ("python (other)", "python" in name)]
    return next((label for label, matches in rules if matches), "other")


class Sampler(threading.Thread):
    """Each process's CPU by class, every half second; processes alive at the start count from then."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[tuple[str, str], list[Any]] = {}
        self.stop = threading.Event()

    def _sample(self, first: bool) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                text = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2:].split()
            cpu, started = (int(fields[11]) + int(fields[12])) / HZ, fields[19]
            key = (pid, started)
            if key not in self.seen:
                label = process_class(pid)
                if label is None:
                    continue
                self.seen[key] = [label, cpu if first else 0.0, cpu]
            self.seen[key][2] = cpu

    def run(self) -> None:
        self._sample(first=True)
        while not self.stop.wait(0.5):
            self._sample(first=False)
        self._sample(first=False)

    def by_class(self) -> dict[str, float]:
        totals: collections.Counter[str] = collections.Counter()
        for label, start, last in self.seen.values():
            totals[label] += last - start
        return {label: round(cpu, 1) for label, cpu in totals.most_common()}


# --- the command ---------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist processes (0: one process, per-test rows)")
    parser.add_argument("--out", type=Path, required=True, help="folder for tests.jsonl and summary.json")
    parser.add_argument("--budget-seconds", type=float, default=360.0)
    parser.add_argument("--top", type=int, default=25, help="modules to print")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's own arguments (default: the whole suite)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("tests.jsonl*"):
        old.unlink()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.test"),
           "PYTHONDONTWRITEBYTECODE": "", "SUITE_CPU_TESTS": str(args.out / "tests.jsonl"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    xdist = ["-n", str(args.workers), "--dist", "loadgroup"] if args.workers else ["-p", "no:xdist"]
    command = [sys.executable, "-m", "pytest", "-p", "benchmarks.suite_cpu", *xdist, "-q", *args.pytest_args]
    sampler = Sampler()
    (busy, idle), wall = machine_cpu(), time.monotonic()
    sampler.start()
    completed = subprocess.run(command, cwd=ROOT, env=env)
    sampler.stop.set()
    sampler.join()
    busy_after, idle_after = machine_cpu()
    wall, busy, idle = time.monotonic() - wall, busy_after - busy, idle_after - idle
    rows = [json.loads(line) for path in sorted(args.out.glob("tests.jsonl.*"))
            for line in path.read_text(encoding="utf-8").splitlines()]
    summary = _summary(rows, sampler.by_class(), wall=wall, busy=busy, idle=idle, args=args)
    summary["exit"] = completed.returncode
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    _print(summary, per_test=not args.workers)
    print(json.dumps({key: summary[key] for key in ("tests", "wall_s", "busy_cpu_s", "idle_cpu_s", "budget_cpu_s",
                                                     "exit")}))
    return completed.returncode


def _summary(rows: list[dict[str, Any]], by_class: dict[str, float], *, wall: float, busy: float, idle: float,
             args: argparse.Namespace) -> dict[str, Any]:
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    lanes: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        for table, key in ((modules, row["id"].split("::")[0]), (lanes, row["lane"])):
            entry = table[key]
            entry[0] += row["wall"]
            entry[1] += row["busy"]
            entry[2] += row["self"]
            entry[3] += 1

    def table(data: dict[str, list[float]]) -> list[dict[str, Any]]:
        return [{"name": name, "wall_s": round(w, 1), "busy_cpu_s": round(b, 1), "pytest_cpu_s": round(s, 1),
                 "tests": int(n)} for name, (w, b, s, n) in sorted(data.items(), key=lambda kv: -kv[1][1])]

    attributed = sum(by_class.values())
    return {"tests": len(rows), "wall_s": round(wall, 1), "busy_cpu_s": round(busy, 1), "idle_cpu_s": round(idle, 1),
            "budget_cpu_s": round(2 * args.budget_seconds, 1), "workers": args.workers,
            "by_class": {**by_class, "unattributed": round(busy - attributed, 1)},
            "lanes": table(lanes), "modules": table(modules)[: args.top]}


def _print(summary: dict[str, Any], *, per_test: bool) -> None:
    print(f"\n{summary['tests']} tests, {summary['wall_s']} s wall, the machine busy {summary['busy_cpu_s']} CPU-s "
          f"(idle {summary['idle_cpu_s']}); 2 cores x {summary['budget_cpu_s'] / 2:.0f} s = {summary['budget_cpu_s']} "
          "CPU-s")
    print("\nCPU-s by process class:")
    for label, cpu in summary["by_class"].items():
        print(f"  {cpu:8.1f}  {label}")
    if not per_test:
        print("\n(per-test and per-module rows need --workers 0: with several processes at once the machine's busy "
              "time is not one test's)")
        return
    for title, key in (("lanes", "lanes"), ("costliest modules", "modules")):
        print(f"\n{title}:  busy CPU-s | pytest's own CPU-s | wall s | tests")
        for row in summary[key]:
            print(f"  {row['busy_cpu_s']:8.1f} {row['pytest_cpu_s']:8.1f} {row['wall_s']:8.1f} {row['tests']:6d}  "
                  f"{row['name']}")


if __name__ == "__main__":
    sys.exit(main())
