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

With `--stopping`, the first scenario's answer streams are also replayed under the stopping rules (fixed k = 5 with
3 of 5; adaptive 3-of-5, stopping once the decision is settled; the engine's posterior rule for each of `--rules`,
its parameters refitted after a `--pilot` of items decided by 3 of 5 and every `--refit-every` items, with the
functions the engine, the refit job and the filter use: `EngineReplay`): answers used, validated, wrong gold labels
kept, right ones dropped (means over the replications).

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
from scoring.agreement.stats.votes import decide  # noqa: E402
from scoring.agreement.uncertainty import (  # noqa: E402
    DIFFICULTY_CHOICES,
    LEVEL,
    MODEL_DIFFICULTY,
    one_coin_uncertainty,
    pooled_parameters,
    pooled_uncertainty,
)
from tasks.stel.majority import m_of_k_validated  # noqa: E402
from tasks.stel.posterior import posterior_final, posterior_rule_of, posterior_validated  # noqa: E402

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


class EngineReplay:
    """The engine's adaptive collection replayed on answer streams, one answer at a time, item after item, with the
    functions the engine and the refit job use: closing (`tasks.stel.posterior.posterior_final`, which
    `annotation.services.adaptive.item_stop_final` wraps; m of k while there is no fit), the refit
    (`scoring.agreement.uncertainty.pooled_parameters`, what `scoring.agreement.posterior_fit.posterior_refit` stores)
    once `pilot` items are decided and then every `refit_every` items, each refit rechecking every earlier item (an
    item no longer decided reopens and takes its next answers), and the filter's decision
    (`scoring.agreement.stats.votes.decide`) under the last fit."""

    def __init__(self, answers: np.ndarray, *, m: int, stop: float | None, drop: float | None, pilot: int,
                 refit_every: int) -> None:
        self.answers = answers
        self.n_items, self.k = answers.shape
        self.m, self.stop, self.drop, self.pilot, self.refit_every = m, stop, drop, pilot, refit_every
        self.used = np.zeros(self.n_items, dtype=np.int64)
        self.rule = posterior_rule_of(stop=stop, drop=drop, fit=None)
        self.fits = 0

    def _final(self, i: int) -> bool:
        correct = int(self.answers[i, :self.used[i]].sum())
        return bool(posterior_final(correct, int(self.used[i]) - correct, k=self.k, m=self.m, rule=self.rule))

    def _collect(self, i: int) -> None:
        while self.used[i] < self.k and (self.used[i] == 0 or not self._final(i)):
            self.used[i] += 1

    def _refit(self, upto: int) -> None:
        correct = np.asarray([self.answers[i, :self.used[i]].sum() for i in range(upto)])
        fit = pooled_parameters(n_correct=correct, n_votes=self.used[:upto])
        self.rule = posterior_rule_of(stop=self.stop, drop=self.drop, fit=fit)
        self.fits += 1
        for i in range(upto):  # the refit job rechecks every item: one the new fit no longer decides reopens
            self._collect(i)

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        for i in range(self.n_items):
            self._collect(i)
            done = i + 1
            if self.stop is not None and done >= self.pilot and (done - self.pilot) % self.refit_every == 0:
                self._refit(done)
        n_correct = np.asarray([self.answers[i, :self.used[i]].sum() for i in range(self.n_items)])
        complete = self.used >= self.k
        decision = decide(complete=complete, has_correct=np.ones(self.n_items, dtype=bool), n_correct=n_correct,
                          m=self.m, closed=~complete, n_used=self.used, k=self.k, rule=self.rule)
        return self.used, decision == "validated"

    def margin_needed(self) -> float:
        """The smallest c − w that the last fit validates (nan without a usable fit): which answers stop an item."""
        if self.rule is None or not self.rule.fitted:
            return float("nan")
        return float(next((d for d in range(self.k + 1) if posterior_validated(d, 0, m=self.m, rule=self.rule)),
                          float("nan")))


def stopping(crowd, *, m: int, rules: list[tuple[float, float | None]], pilot: int, refit_every: int
             ) -> dict[str, dict[str, float]]:
    """Answers used and decisions on the same answer streams: fixed k with m of k, adaptive m of k (the engine with
    no posterior stop), and the engine with each posterior rule (stop threshold, drop threshold or None)."""
    answers = answers_in_order(crowd)
    n_items, k = answers.shape
    arms = {"fixed m-of-k": (np.full(n_items, k), m_of_k_validated(answers.sum(axis=1), m)),
            "adaptive m-of-k": EngineReplay(answers, m=m, stop=None, drop=None, pilot=pilot,
                                            refit_every=refit_every).run()}
    margins = {}
    for stop, drop in rules:
        name = f"posterior stop {stop}" + (f", drop {drop}" if drop is not None else "")
        replay = EngineReplay(answers, m=m, stop=stop, drop=drop, pilot=pilot, refit_every=refit_every)
        arms[name] = replay.run()
        margins[name] = replay.margin_needed()
    out = {}
    for name, (used, validated) in arms.items():
        out[name] = {"answers": int(used.sum()), "validated": int(validated.sum()),
                     "wrong_gold_kept": int((validated & ~crowd.gold_right).sum()),
                     "right_gold_dropped": int((~validated & crowd.gold_right).sum()),
                     **({"margin_needed": margins[name]} if name in margins else {})}
    return out


def stopping_means(spec: CrowdSpec, *, replications: int, rules: list[tuple[float, float | None]], pilot: int,
                   refit_every: int) -> dict[str, dict[str, float]]:
    """Means over the replications, and each figure's range (`<figure>_min`, `<figure>_max`)."""
    runs: dict[str, dict[str, list[float]]] = {}
    for seed in range(replications):
        for name, figures in stopping(crowd_simulate(spec, seed=seed), m=3, rules=rules, pilot=pilot,
                                      refit_every=refit_every).items():
            for key, value in figures.items():
                runs.setdefault(name, {}).setdefault(key, []).append(value)
    return {name: {**{key: round(float(np.mean(v)), 1) for key, v in figures.items()},
                   **{f"{key}_min": float(np.min(v)) for key, v in figures.items()},
                   **{f"{key}_max": float(np.max(v)) for key, v in figures.items()}}
            for name, figures in runs.items()}


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
    parser.add_argument("--rules", nargs="+", default=["0.99"],
                        help="posterior rules: STOP or STOP:DROP (e.g. 0.99 0.999 0.99:0.2)")
    parser.add_argument("--pilot", type=int, default=200, help="items decided by m of k before the first fit")
    parser.add_argument("--refit-every", type=int, default=200, help="items between refits (the periodic job)")
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
        rules = [(float(r.split(":")[0]), float(r.split(":")[1]) if ":" in r else None) for r in args.rules]
        summary["stopping"] = stopping_means(replace(BASE, n_items=args.items), replications=args.replications,
                                             rules=rules, pilot=args.pilot, refit_every=args.refit_every)
        print("stopping", json.dumps(summary["stopping"]), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
