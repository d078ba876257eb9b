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

With `--stopping`, the first scenario's answer streams are also replayed under three stopping rules (fixed k = 5
with 3 of 5; adaptive 3-of-5, stopping once the decision is settled; stopping once the pooled model's posterior is
≥ `--threshold` or ≤ 1 − it, its parameters fitted on a 200-item pilot answered 5 times): answers used, wrong gold
labels kept, right ones dropped (means over the replications).

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
from scoring.agreement.uncertainty import (  # noqa: E402
    DIFFICULTY_CHOICES,
    LEVEL,
    MODEL_DIFFICULTY,
    one_coin_uncertainty,
    pooled_uncertainty,
)

BASE = CrowdSpec()
SCENARIOS: dict[str, CrowdSpec] = {
    "10% wrong gold, 10% spammers": BASE,
    "10% wrong gold, 25% spammers": replace(BASE, spammers=0.25),
    "20% wrong gold, 10% spammers": replace(BASE, wrong_gold=0.20),
    "3% wrong gold, 10% spammers": replace(BASE, wrong_gold=0.03),
    "hard items (difficulty Beta(1, 2))": replace(BASE, difficulty_b=2.0),
    "k = 3": replace(BASE, k=3),
}


def measure(spec: CrowdSpec, seed: int, difficulty: str = "auto") -> dict[str, float]:
    crowd = crowd_simulate(spec, seed=seed)
    started = time.perf_counter()
    fitted = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, seed=seed,
                                  digits=None, difficulty=difficulty)
    seconds = time.perf_counter() - started
    result = fitted.per_item
    # coverage is counted against the oracle of the model that was fitted
    oracle = crowd.oracle_difficulty if fitted.model == MODEL_DIFFICULTY else crowd.oracle
    test = fitted.facts.get("overdispersion", {})
    n_correct, n_votes = crowd.counts()
    pooled = pooled_uncertainty(items=np.arange(len(n_correct)), n_correct=n_correct, n_votes=n_votes,
                                seed=seed).per_item
    p = result["p_correct"].to_numpy()
    return {
        "ece": expected_calibration_error(p, crowd.gold_right),
        "coverage": coverage(result["p_correct_low"].to_numpy(), result["p_correct_high"].to_numpy(), oracle,
                             tolerance=0.0),
        "difficulty_model": float(fitted.model == MODEL_DIFFICULTY),
        "lr_statistic": float(test.get("lr_statistic", 0.0)),
        "width_median": float(np.median(result["p_correct_high"] - result["p_correct_low"])),
        "pooled_ece": expected_calibration_error(pooled["p_correct"].to_numpy(), crowd.gold_right),
        "expected_wrong": float((1.0 - p).sum()),
        "wrong": int((~crowd.gold_right).sum()),
        "annotators": int(len(np.unique(crowd.workers))),
        "seconds": seconds,
    }


def answers_in_order(crowd) -> np.ndarray:
    """Items × k: whether each item's 1st, 2nd, … answer (in the order they were given) agrees with its gold."""
    n_items = len(crowd.gold_right)
    order = np.argsort(crowd.items, kind="stable")  # the stream is in time order; stable keeps it within an item
    k = len(crowd.items) // n_items
    return crowd.agree[order].reshape(n_items, k)


def stopping(crowd, *, m: int, threshold: float, pilot: int, seed: int) -> dict[str, dict[str, float]]:
    """Answers used and decisions of three rules on the same answer streams: fixed k with the m-of-k rule; adaptive
    m-of-k (stop once the decision cannot change); the posterior rule (stop once P(gold right) of the pooled model,
    fitted on a pilot of `pilot` items answered k times, is ≥ threshold or ≤ 1 − threshold; at k, validated when
    P ≥ 0.5)."""
    answers = answers_in_order(crowd)
    n_items, k = answers.shape
    fitted = pooled_uncertainty(items=np.arange(pilot), n_correct=answers[:pilot].sum(axis=1),
                                n_votes=np.full(pilot, k), seed=seed, digits=None)
    share, accuracy = fitted.facts["share_gold_right"], fitted.facts["vote_accuracy"]
    agree_so_far = np.cumsum(answers, axis=1)
    n_so_far = np.arange(1, k + 1)[None, :]
    log_odds = (np.log(share / (1 - share)) + (2 * agree_so_far - n_so_far) * np.log(accuracy / (1 - accuracy)))
    posterior = 1 / (1 + np.exp(-log_odds))
    rules = {
        "fixed m-of-k": (np.full(n_items, k), agree_so_far[:, -1] >= m),
        "adaptive m-of-k": _m_of_k_adaptive(agree_so_far, m=m),
        f"posterior ≥ {threshold}": _posterior_stop(posterior, threshold=threshold),
    }
    out = {}
    for name, (used, validated) in rules.items():
        out[name] = {"answers": int(used.sum()), "validated": int(validated.sum()),
                     "wrong_gold_kept": int((validated & ~crowd.gold_right).sum()),
                     "right_gold_dropped": int((~validated & crowd.gold_right).sum())}
    return out


def _m_of_k_adaptive(agree_so_far: np.ndarray, *, m: int) -> tuple[np.ndarray, np.ndarray]:
    k = agree_so_far.shape[1]
    disagree = np.arange(1, k + 1)[None, :] - agree_so_far
    settled = (agree_so_far >= m) | (disagree > k - m)
    used = settled.argmax(axis=1) + 1
    return used, agree_so_far[np.arange(len(used)), used - 1] >= m


def _posterior_stop(posterior: np.ndarray, *, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    sure = (posterior >= threshold) | (posterior <= 1 - threshold)
    sure[:, -1] = True
    used = sure.argmax(axis=1) + 1
    return used, posterior[np.arange(len(used)), used - 1] >= 0.5


def stopping_means(spec: CrowdSpec, *, replications: int, threshold: float) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = {}
    for seed in range(replications):
        for name, figures in stopping(crowd_simulate(spec, seed=seed), m=3, threshold=threshold, pilot=200,
                                      seed=seed).items():
            for key, value in figures.items():
                totals.setdefault(name, {})[key] = totals.get(name, {}).get(key, 0.0) + value / replications
    return {name: {key: round(v, 1) for key, v in figures.items()} for name, figures in totals.items()}


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
        "difficulty_model_share": round(float(column("difficulty_model").mean()), 2),
        "lr_statistic_median": round(float(np.median(column("lr_statistic"))), 2),
        "lr_statistic_max": round(float(column("lr_statistic").max()), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=10)
    parser.add_argument("--items", type=int, default=BASE.n_items)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--stopping", action="store_true", help="also compare stopping rules on the first scenario")
    parser.add_argument("--threshold", type=float, default=0.99)
    parser.add_argument("--stopping-only", action="store_true", help="only the stopping comparison")
    parser.add_argument("--difficulty", choices=DIFFICULTY_CHOICES, default="auto",
                        help="the item-difficulty model: chosen by the overdispersion test (auto), never, always")
    parser.add_argument("--scenarios", help="only the scenarios whose name contains one of these (comma-separated)")
    args = parser.parse_args()
    results = {}
    chosen = {name: spec for name, spec in SCENARIOS.items()
              if not args.scenarios or any(part in name for part in args.scenarios.split(","))}
    for name, spec in ({} if args.stopping_only else chosen).items():
        spec = replace(spec, n_items=args.items)
        runs = [measure(spec, seed, args.difficulty) for seed in range(args.replications)]
        results[name] = {"spec": asdict(spec), **summarize(runs)}
        print(name, json.dumps(results[name]), flush=True)
    worst_ece = max((r["ece_max"] for r in results.values()), default=0.0)
    worst_coverage = max((abs(r["coverage_mean"] - LEVEL) for r in results.values()), default=0.0)
    summary = {"replications": args.replications, "items": args.items, "level": LEVEL,
               "difficulty": args.difficulty, "worst_ece": worst_ece,
               "worst_coverage_gap": round(worst_coverage, 4),
               "ece_ok": worst_ece <= 0.03, "coverage_ok": worst_coverage <= 0.03, "scenarios": results}
    if args.stopping or args.stopping_only:
        summary["stopping"] = stopping_means(replace(BASE, n_items=args.items), replications=args.replications,
                                             threshold=args.threshold)
        print("stopping", json.dumps(summary["stopping"]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
