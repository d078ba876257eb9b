"""Fewer paid people where a model agrees: simulated crowds on STEL's published vote counts, three ways.

- fixed k = 5: every item gets 5 answers; validated when at least m = 3 are correct (STEL's rule);
- plain adaptive stopping: an item stops once its 3-of-5 decision can no longer change
  (`annotation.services.adaptive.item_decision_final`);
- adaptive stopping with a model guide: also stops once the first h human answers all equal the model's answer,
  where the model answered the same in every order (`annotation.services.adaptive.guide_agrees`); items where it was
  order-sensitive, or where it disagrees with those first answers, keep the plain rule (and the full k it needs).
  Such an item is decided on its h unanimous human answers (`scoring.agreement.stats.votes.decide`).

Items: the 2,113 STEL quadruples, each with its published number of correct votes out of 5
(benchmarks/data/stel_published_votes.json, reconstructed from STEL's published log and samples: see there).
A simulated participant answers item i correctly with probability votes_i / 5, as benchmarks/adaptive_collection.py
does. Every arm sees the same answer streams (participant j's answer to item i is drawn once), so the counts differ
only by the stopping rule. Simulated models: how often they are right and how often their answer depends on the
order of display is stated for each; `crowd-like` is right exactly as often as one participant on that item.

    .venv/bin/python benchmarks/model_guided_stopping.py --replications 200 --out benchmarks/out/model_guided.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

K, M = 5, 3
# name: (accuracy on item i as a function of the crowd's per-answer accuracy p_i, share of items order-sensitive)
MODELS = {
    "strong (0.95 right, 5% order-sensitive)": (lambda p: np.full_like(p, 0.95), 0.05),
    "crowd-like (p_i right, 20% order-sensitive)": (lambda p: p, 0.20),
    "weak (0.6 right, 40% order-sensitive)": (lambda p: np.full_like(p, 0.60), 0.40),
}


def load_items() -> tuple[np.ndarray, np.ndarray]:
    data = json.loads((ROOT / "benchmarks" / "data" / "stel_published_votes.json").read_text())
    votes, component = [], []
    for name, counts in data["components"].items():
        for v, n in counts.items():
            votes += [int(v)] * int(n)
            component += [name] * int(n)
    return np.asarray(votes), np.asarray(component)


def fleiss_check(votes: np.ndarray, component: np.ndarray) -> dict[str, float]:
    """Fleiss' kappa of the vote table (statsmodels), on the two answers (S1-S2 / S2-S1), the correct one
    alternating between them as in STEL's balanced files."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    out = {}
    for name in ("all", *sorted(set(component))):
        v = votes if name == "all" else votes[component == name]
        table = np.column_stack([v, K - v])
        table[1::2] = table[1::2, ::-1]
        out[name] = round(float(fleiss_kappa(table)), 3)
    return out


def simulate(votes: np.ndarray, *, model: tuple, h: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One replication: per item, annotations used and decision under each arm."""
    from annotation.services.adaptive import guide_agrees, item_decision_final

    p = votes / K
    n = len(votes)
    answers = rng.random((n, K)) < p[:, None]  # True = correct; participant j's answer to item i
    accuracy, sensitive_share = model
    model_right = rng.random(n) < accuracy(p)
    consistent = rng.random(n) >= sensitive_share
    fixed_decision = answers.sum(axis=1) >= M
    used_plain = np.full(n, K)
    used_guided = np.full(n, K)
    guided_decision = fixed_decision.copy()
    stopped_by_guide = np.zeros(n, dtype=bool)
    for i in range(n):
        row = answers[i]
        labels = ["C" if a else "W" for a in row]  # the model's answer is C when right, W when wrong
        guide = ("C" if model_right[i] else "W") if consistent[i] else ""
        plain_stop = K
        for t in range(1, K + 1):
            correct = int(row[:t].sum())
            if item_decision_final(correct=correct, wrong=t - correct, k=K, m=M):
                plain_stop = t
                break
        used_plain[i] = plain_stop
        guided_stop = plain_stop
        for t in range(1, plain_stop + 1):
            if guide_agrees(first_answers=labels[:t], guide_answer=guide, stop_after=h):
                guided_stop = t
                stopped_by_guide[i] = t < plain_stop
                guided_decision[i] = guide == "C"
                break
        used_guided[i] = guided_stop
    return {"fixed": np.full(n, K), "plain": used_plain, "guided": used_guided, "fixed_decision": fixed_decision,
            "guided_decision": guided_decision, "stopped_by_guide": stopped_by_guide}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--stop-after", type=int, nargs="+", default=[2, 1], help="h: agreeing first answers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "model_guided.json"))
    args = parser.parse_args()
    import django

    django.setup()
    votes, component = load_items()
    started = time.perf_counter()
    results = {"items": len(votes), "k": K, "m": M, "replications": args.replications,
               "fleiss_kappa_of_the_table": fleiss_check(votes, component),
               "stel_logged_fleiss_kappa": {"all": 0.298, "formality": 0.470, "simplicity": 0.166}, "rows": []}
    print(json.dumps({"fleiss_kappa_of_the_table": results["fleiss_kappa_of_the_table"]}), flush=True)
    for name, model in MODELS.items():
        for h in args.stop_after:
            rng = np.random.default_rng(args.seed)
            totals = {"fixed": [], "plain": [], "guided": [], "changed": [], "validated_fixed": [],
                      "validated_guided": [], "stopped_by_guide": [], "gained_valid": [], "lost_valid": []}
            for _ in range(args.replications):
                sim = simulate(votes, model=model, h=h, rng=rng)
                for arm in ("fixed", "plain", "guided"):
                    totals[arm].append(int(sim[arm].sum()))
                changed = sim["guided_decision"] != sim["fixed_decision"]
                totals["changed"].append(int(changed.sum()))
                totals["gained_valid"].append(int((changed & sim["guided_decision"]).sum()))
                totals["lost_valid"].append(int((changed & ~sim["guided_decision"]).sum()))
                totals["validated_fixed"].append(int(sim["fixed_decision"].sum()))
                totals["validated_guided"].append(int(sim["guided_decision"].sum()))
                totals["stopped_by_guide"].append(int(sim["stopped_by_guide"].sum()))
            row = {"model": name, "stop_after": h}
            for key, values in totals.items():
                row[key] = round(float(np.mean(values)), 1)
                row[f"{key}_p95"] = [int(np.percentile(values, 2.5)), int(np.percentile(values, 97.5))]
            row["saved_plain"] = round(1 - row["plain"] / row["fixed"], 4)
            row["saved_guided"] = round(1 - row["guided"] / row["fixed"], 4)
            results["rows"].append(row)
            print(json.dumps({k: row[k] for k in ("model", "stop_after", "fixed", "plain", "guided", "saved_plain",
                                                  "saved_guided", "changed", "gained_valid", "lost_valid")}),
                  flush=True)
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["command"] = " ".join([".venv/bin/python", *sys.argv])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
