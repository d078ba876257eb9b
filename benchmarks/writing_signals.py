"""How well the writing signals tell machine-like writers from careful typists, on simulated writers.

A rewrite study of the demo's 80 informal sentences (fixtures/corpora/formality_informal.txt) is written over HTTP
(gunicorn + PostgreSQL) by `simulate_annotators --writers`: careful typists, pasters, machine-speed typists,
copiers, and forgers who send forged telemetry (annotation/management/simulated_writers.py), in real time. Then the
study's writing signals are measured with their default thresholds, and per signal and combined (any signal) we
report the share of each kind of writer with at least one flagged rewrite: "caught" for the machine-like kinds,
"flagged" for careful typists; and per kind of forged telemetry, how many of the forged rewrites the server's
consistency check marked inconsistent.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_writing_bench .venv/bin/python benchmarks/writing_signals.py \
        --writers 200 --out benchmarks/out/writing_signals.json

This shows the plumbing on a simulation whose machine-like writers behave as described; it does not measure how
well real chatbot text is detected, which is much weaker (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_writing_bench")
MIX = "careful=0.45,paster=0.15,machine=0.15,copier=0.15,forger=0.1"


def ensure_database() -> None:
    name = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], capture_output=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, check=True, capture_output=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_study(k: int, per_batch: int) -> str:
    from annotation.services.rewrites import rewrite_study_create
    from annotation.services.study_settings import study_settings_build

    sources = (ROOT / "fixtures" / "corpora" / "formality_informal.txt").read_text(encoding="utf-8").splitlines()
    slug = f"writing-bench-{int(time.time())}"
    rewrite_study_create(
        slug=slug, sources=[(str(n), s) for n, s in enumerate(sources, 1) if s.strip()], target_style="formal",
        eligibility_questions=[], filters={"min_words": 0, "max_words": 0, "questions": False}, min_length=10,
        max_length=400,
        settings=study_settings_build(
            annotators_per_item=k, items_per_batch=per_batch, max_batches=1, time_limit_minutes=30,
        ),
    )
    return slug


def turkcorpus_pairs() -> dict[str, Any]:
    """Real people's rewrites of one source: TurkCorpus's 8 crowd simplifications of each test sentence (Xu et al.
    2016). The share of pairs of two people's rewrites at least 90 / 95 alike (the near-duplicate signal's
    similarity), overall and among pairs whose both rewrites pass a copy check at 90 (rewrites that differ from the
    source, as a rewrite study requires): the near-duplicate threshold's false alarms on honest writers."""
    import csv

    from annotation.services.writing_signals.measures import char_similarity, normalize

    path = ROOT.parent / "shared" / "data" / "turkcorpus" / "test.8turkers.organized.tsv"
    counts = {"sentences": 0, "pairs": 0, "pairs_90": 0, "pairs_95": 0, "rewritten_pairs": 0,
              "rewritten_pairs_90": 0, "rewritten_pairs_95": 0}
    with path.open(encoding="utf-8") as handle:
        for cells in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(cells) < 10:
                continue
            source, refs = normalize(cells[1]), [normalize(c) for c in cells[2:10]]
            matrix = char_similarity([source, *refs])
            counts["sentences"] += 1
            for i in range(1, 9):
                for j in range(i + 1, 9):
                    score = float(matrix[i][j])
                    rewritten = bool(matrix[0][i] < 90 and matrix[0][j] < 90)
                    counts["pairs"] += 1
                    counts["pairs_90"] += score >= 90
                    counts["pairs_95"] += score >= 95
                    counts["rewritten_pairs"] += rewritten
                    counts["rewritten_pairs_90"] += rewritten and score >= 90
                    counts["rewritten_pairs_95"] += rewritten and score >= 95
    return {**counts, **{f"share_{k}": round(counts[k] / counts[k.rsplit("_", 1)[0]], 4)
                         for k in ("pairs_90", "pairs_95", "rewritten_pairs_90", "rewritten_pairs_95")}}


def rates(truth: dict[str, Any], flags_by_writer: dict[str, dict[str, int]], signals: list[str]) -> dict[str, Any]:
    """Per writer kind: writers, and per signal (and `any`) the share with at least one flagged rewrite."""
    out: dict[str, Any] = {}
    kinds = sorted({t["kind"] for t in truth.values()})
    for kind in kinds:
        writers = [pid for pid, t in truth.items() if t["kind"] == kind and t["rewrites"]]
        if kind == "copier":  # a copier who found nothing to copy wrote its own: not a machine-like writer
            writers = [pid for pid in writers if any(r["copied"] for r in truth[pid]["rewrites"])]
        row: dict[str, Any] = {"writers": len(writers)}
        for signal in [*signals, "any"]:
            hit = sum(1 for pid in writers if (flags_by_writer.get(pid, {}).get(signal, 0) > 0))
            row[signal] = round(hit / len(writers), 4) if writers else None
        out[kind] = row
    machine = [pid for kind in ("paster", "machine", "copier", "forger") for pid in truth
               if truth[pid]["kind"] == kind and truth[pid]["rewrites"]
               and (kind != "copier" or any(r["copied"] for r in truth[pid]["rewrites"]))]
    out["machine_like"] = {"writers": len(machine), **{
        signal: round(sum(1 for pid in machine if flags_by_writer.get(pid, {}).get(signal, 0)) / len(machine), 4)
        for signal in [*signals, "any"]}}
    return out


def forgeries(truth: dict[str, Any], study: Any) -> dict[str, dict[str, int]]:
    """Per kind of forged telemetry: forged rewrites stored, and how many the consistency check marked
    inconsistent (the `telemetry_inconsistent` signal's evidence: the bounds they broke)."""
    from annotation.models import Response

    status = dict(Response.objects.filter(study=study).values_list("reservation__public_id", "telemetry_status"))
    out: dict[str, dict[str, int]] = {}
    for rewrite in (r for t in truth.values() if t["kind"] == "forger" for r in t["rewrites"]):
        # (a forger's text the study's copy check would refuse is written by hand instead: no forgery)
        row = out.setdefault(rewrite.get("forgery", "none (written by hand)"), {"rewrites": 0, "inconsistent": 0})
        if rewrite["item"] in status:
            row["rewrites"] += 1
            row["inconsistent"] += status[rewrite["item"]] == "inconsistent"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=200)
    parser.add_argument("--mix", default=MIX)
    parser.add_argument("--k", type=int, default=8, help="rewrites per source")
    parser.add_argument("--per-batch", type=int, default=2, help="rewrites per writer")
    parser.add_argument("--copier-delay", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--out", default="benchmarks/out/writing_signals.json")
    parser.add_argument("--near-duplicate", type=float, nargs="+", default=[90.0, 95.0],
                        help="near-duplicate thresholds to measure the same writing with")
    parser.add_argument("--only-turkcorpus", action="store_true", help="only the TurkCorpus pairs (no simulation)")
    args = parser.parse_args()
    if args.only_turkcorpus:
        import django

        django.setup()
        print(json.dumps(turkcorpus_pairs(), indent=2))
        return

    ensure_database()
    import django

    django.setup()
    from annotation.models import Response, RewriteSettings, Study, WritingSignal
    from annotation.services.writing_signals.registry import SPECS
    from annotation.services.writing_signals.services import writing_signals_compute

    slug = build_study(args.k, args.per_batch)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--workers", str(args.workers),
         "--worker-class", "gthread", "--threads", str(args.threads), "--bind", f"127.0.0.1:{port}",
         "--log-level", "warning"], cwd=ROOT, env=env)
    truth_path = Path(args.out).with_suffix(".writers.json")
    truth_path.parent.mkdir(parents=True, exist_ok=True)
    load = {"before": Path("/proc/loadavg").read_text().strip()}
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "scripts/wait_for_url.py", f"{base}/api/v1/ping/", "60"], cwd=ROOT,
                       check=True)
        simulated = subprocess.run(
            [sys.executable, "manage.py", "simulate_annotators", "--study", slug, "--participants",
             str(args.writers), "--concurrency", str(args.writers), "--base-url", base, "--seed", str(args.seed),
             "--writers", args.mix, "--copier-delay", str(args.copier_delay), "--writers-out", str(truth_path),
             "--ramp-up", "20"], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    load["after"] = Path("/proc/loadavg").read_text().strip()
    simulation = json.loads(simulated.stdout.strip().splitlines()[-1])
    elapsed = time.perf_counter() - started
    study = Study.objects.get(slug=slug)
    truth = json.loads(truth_path.read_text())
    careful_ids = {pid for pid, t in truth.items() if t["kind"] == "careful"}
    runs = {}
    for near in args.near_duplicate:
        RewriteSettings.objects.filter(study=study).update(signal_thresholds={"near_duplicate": near})
        computed = time.perf_counter()
        summary = writing_signals_compute(study=study)
        compute_seconds = time.perf_counter() - computed
        flags_by_writer: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for pid, signal in WritingSignal.objects.filter(response__study=study, flagged=True).values_list(
                "response__participant__external_id", "signal"):
            flags_by_writer[pid][signal] += 1
        for by in flags_by_writer.values():
            by["any"] = sum(by.values())
        signals = [name for name in SPECS if name not in summary["off"]]
        runs[str(near)] = {"thresholds": {n: summary["thresholds"][n] for n in signals},
                           "rates": rates(truth, flags_by_writer, signals),
                           "compute_seconds": round(compute_seconds, 3)}
    # How alike careful typists' rewrites of one source are: the near-duplicate threshold's margin.
    careful_scores = sorted(WritingSignal.objects.filter(
        response__study=study, signal="near_duplicate", response__participant__external_id__in=careful_ids,
        details__other_writer__in=[f"prolific:{pid}" for pid in careful_ids]).values_list("score", flat=True))
    speeds = sorted(WritingSignal.objects.filter(
        response__study=study, signal="typing_speed", response__participant__external_id__in=careful_ids)
        .values_list("score", flat=True))
    result = {
        "study": slug, "writers": args.writers, "mix": args.mix, "k": args.k, "per_batch": args.per_batch,
        "seed": args.seed, "rewrites": Response.objects.filter(study=study).count(),
        "simulation": {key: simulation.get(key) for key in ("elapsed_s", "answers_stored", "errors", "refused",
                                                             "writers_careful", "writers_paster", "writers_machine",
                                                             "writers_copier", "writers_forger")},
        "telemetry": summary["telemetry"], "off": summary["off"], "runs": runs,
        "forgeries": forgeries(truth, study),
        "careful_near_duplicate_over_90": sum(s >= 90 for s in careful_scores),
        "careful_rewrites_compared": len(careful_scores),
        "careful_speed_max": speeds[-1] if speeds else None,
        "elapsed_s": round(elapsed, 1), "loadavg": load, "turkcorpus": turkcorpus_pairs(),
    }
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    for near, run in runs.items():
        rates_table(run["rates"], [*run["thresholds"]], f"near_duplicate threshold {near}")


def rates_table(rows: dict[str, Any], signals: list[str], title: str) -> None:
    header = ["writers", *signals, "any"]
    print(f"\n{title}\n\n| kind | " + " | ".join(header) + " |\n|---|" + "---|" * len(header))
    for kind, row in rows.items():
        cells = [str(row["writers"])] + [f"{row[s]:.1%}" if row[s] is not None else "–" for s in header[1:]]
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
