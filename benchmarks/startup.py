"""How long Django's set-up takes in a fresh process: `django.setup()` (settings, every app's models, the admin's
autodiscovery), what every management command, Celery worker and test process pays before doing anything; and, after
it, the import of `score_stel`'s command and service (what a `score_stel` call adds before it reads a file).

    .venv/bin/python benchmarks/startup.py --runs 7
    .venv/bin/python benchmarks/startup.py --runs 7 --git-ref main   # the same, on another commit (a worktree)

Each run is a new interpreter; the figures are the medians over the runs (and the range), timed inside the process
(`time.perf_counter` around the call) and from the outside (the whole process, interpreter start included). Each run
also lists which of the heavy libraries (pandas, pyarrow, scipy, krippendorff, sacrebleu, scikit-learn, torch,
transformers) the set-up loaded; `tests/core/test_apps.py` holds the set-up to none of the first five. The 1-minute
load average before each run is recorded. The last line of standard output is a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "pyarrow", "scipy", "krippendorff", "sacrebleu", "sklearn", "torch", "transformers")
DRIVER = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
began = time.perf_counter()
import django
django.setup()
set_up = time.perf_counter()
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
import scoring.management.commands.score_stel  # noqa: F401
from scoring.model_scoring.services import stel_score  # noqa: F401
done = time.perf_counter()
print(json.dumps({{"setup_s": set_up - began, "score_stel_import_s": done - set_up, "heavy_after_setup": heavy,
                  "heavy_after_score_stel": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def one_run(cwd: Path, env: dict[str, str]) -> dict:
    load = os.getloadavg()[0]
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DRIVER.format(heavy=HEAVY)], cwd=cwd, env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": wall, "load_1min": round(load, 2)}


def summary(runs: list[dict], key: str) -> dict[str, float]:
    values = [r[key] for r in runs]
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="fresh processes (default 7)")
    parser.add_argument("--settings", default="config.settings.local", help="DJANGO_SETTINGS_MODULE")
    parser.add_argument("--git-ref", default="", help="time this commit instead (checked out in a temporary worktree)")
    args = parser.parse_args()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": args.settings}
    cwd, worktree = ROOT, None
    if args.git_ref:
        worktree = Path(tempfile.mkdtemp(prefix="startup-")) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.git_ref], cwd=ROOT, check=True,
                       capture_output=True)
        cwd = worktree
    env["PYTHONPATH"] = str(cwd)
    try:
        runs = []
        for index in range(args.runs):
            run = one_run(cwd, env)
            runs.append(run)
            print(f"run {index + 1}: set-up {run['setup_s']:.2f} s, score_stel import {run['score_stel_import_s']:.2f}"
                  f" s, process {run['process_s']:.2f} s (load {run['load_1min']}), heavy after set-up: "
                  f"{', '.join(run['heavy_after_setup']) or 'none'}", file=sys.stderr)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
    print(json.dumps({
        "ok": True, "ref": args.git_ref or "working tree", "settings": args.settings, "runs": len(runs),
        "setup_s": summary(runs, "setup_s"), "score_stel_import_s": summary(runs, "score_stel_import_s"),
        "process_s": summary(runs, "process_s"), "loads_1min": [r["load_1min"] for r in runs],
        "heavy_after_setup": runs[-1]["heavy_after_setup"],
        "heavy_after_score_stel": runs[-1]["heavy_after_score_stel"],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
