"""Is the per-item uncertainty calibrated? Simulated crowds with known truth, measured as the export computes it.

Each scenario (`scoring.agreement.simulated_crowds.CrowdSpec`: heterogeneous annotator accuracy, spammers, a known
share of wrong gold labels, item difficulty, annotators in batches of 14) is simulated `--replications` times with
seeds 0, 1, …; each crowd is scored by `scoring.agreement.uncertainty.one_coin_uncertainty` (per annotator) and by
`pooled_uncertainty` (the same answers as counts, no annotator identity). Reported per scenario:

- ECE: expected calibration error of `p_correct` against whether the gold answer is right (10 equal-width bins), per
  replication; the goal is ≤ 0.03;
- coverage: share of items whose oracle posterior (the one-coin posterior with the true parameters) lies in
  [`p_correct_low`, `p_correct_high`] (nominal 0.90; unrounded figures, since an exported interval rounded to
  [0.9999, 1.0] covers trivially); the goal is within 3 points of 0.90 on the mean over replications;
- expected wrong gold labels (Σ 1 − p) beside the true number.

    .venv/bin/python benchmarks/item_uncertainty.py --replications 10 --out benchmarks/out/item_uncertainty.json

The last line is a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from scoring.agreement.simulated_crowds import (  # noqa: E402 (after the path is set)
    CrowdSpec,
    coverage,
    crowd_simulate,
    expected_calibration_error,
)
from scoring.agreement.uncertainty import LEVEL, one_coin_uncertainty, pooled_uncertainty  # noqa: E402

BASE = CrowdSpec()
SCENARIOS = {
    "10% wrong gold, 10% spammers": BASE,
    "10% wrong gold, 25% spammers": replace(BASE, spammers=0.25),
    "20% wrong gold, 10% spammers": replace(BASE, wrong_gold=0.20),
    "3% wrong gold, 10% spammers": replace(BASE, wrong_gold=0.03),
    "hard items (difficulty Beta(1, 2))": replace(BASE, difficulty_b=2.0),
    "k = 3": replace(BASE, k=3),
}


def measure(spec: CrowdSpec, seed: int) -> dict[str, float]:
    crowd = crowd_simulate(spec, seed=seed)
    started = time.perf_counter()
    result = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, seed=seed,
                                  digits=None).per_item
    seconds = time.perf_counter() - started
    n_correct, n_votes = crowd.counts()
    pooled = pooled_uncertainty(items=np.arange(len(n_correct)), n_correct=n_correct, n_votes=n_votes,
                                seed=seed).per_item
    p = result["p_correct"].to_numpy()
    return {
        "ece": expected_calibration_error(p, crowd.gold_right),
        "coverage": coverage(result["p_correct_low"].to_numpy(), result["p_correct_high"].to_numpy(), crowd.oracle,
                             tolerance=0.0),
        "width_median": float(np.median(result["p_correct_high"] - result["p_correct_low"])),
        "pooled_ece": expected_calibration_error(pooled["p_correct"].to_numpy(), crowd.gold_right),
        "expected_wrong": float((1.0 - p).sum()),
        "wrong": int((~crowd.gold_right).sum()),
        "annotators": int(len(np.unique(crowd.workers))),
        "seconds": seconds,
    }


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    def column(name: str) -> np.ndarray:
        return np.asarray([run[name] for run in runs], dtype=float)

    return {
        "ece_mean": round(float(column("ece").mean()), 4), "ece_max": round(float(column("ece").max()), 4),
        "coverage_mean": round(float(column("coverage").mean()), 4),
        "coverage_min": round(float(column("coverage").min()), 4),
        "coverage_max": round(float(column("coverage").max()), 4),
        "width_median": round(float(column("width_median").mean()), 4),
        "pooled_ece_mean": round(float(column("pooled_ece").mean()), 4),
        "pooled_ece_max": round(float(column("pooled_ece").max()), 4),
        "expected_wrong_mean": round(float(column("expected_wrong").mean()), 1),
        "wrong_mean": round(float(column("wrong").mean()), 1),
        "annotators_mean": round(float(column("annotators").mean()), 1),
        "seconds_median": round(float(np.median(column("seconds"))), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--items", type=int, default=BASE.n_items)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = {}
    for name, spec in SCENARIOS.items():
        spec = replace(spec, n_items=args.items)
        runs = [measure(spec, seed) for seed in range(args.replications)]
        results[name] = {"spec": asdict(spec), **summarize(runs)}
        print(name, json.dumps(results[name]), flush=True)
    worst_ece = max(r["ece_max"] for r in results.values())
    worst_coverage = max(abs(r["coverage_mean"] - LEVEL) for r in results.values())
    summary = {"replications": args.replications, "items": args.items, "level": LEVEL, "worst_ece": worst_ece,
               "worst_coverage_gap": round(worst_coverage, 4),
               "ece_ok": worst_ece <= 0.03, "coverage_ok": worst_coverage <= 0.03, "scenarios": results}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
