"""Simulated crowds with known truth, to measure what `scoring.agreement.uncertainty` says against what is so.

An item's gold answer is wrong with probability `wrong_gold`. Annotators come in batches of `batch` items (1 to 4
batches each, as on Prolific); a share `spammers` answers at random, the rest have their own accuracy
0.5 + 0.5 · Beta(`accuracy_a`, `accuracy_b`). Items differ in difficulty d ~ Beta(1, `difficulty_b`): an annotator of
accuracy a is right on an item of difficulty d with probability 0.5 + (a − 0.5)(1 − d), so a hard item is near a
coin flip for everyone. Every item gets k answers from k different batches.

The oracle is the item's posterior under the one-coin model with the true parameters (each annotator's accuracy
averaged over the difficulties, the true share of wrong gold labels): what the one-coin estimate would be if nothing
had to be estimated. `oracle_difficulty` is the posterior of the model that made the answers (the true skills, the
item's difficulty summed out over its distribution): what the difficulty model's estimate would be. Interval
coverage is counted against the oracle of the model that was fitted; calibration against the truth itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit, logit, logsumexp


@dataclass(frozen=True)
class CrowdSpec:
    n_items: int = 2000
    k: int = 5
    batch: int = 14
    wrong_gold: float = 0.10
    spammers: float = 0.10
    accuracy_a: float = 4.0
    accuracy_b: float = 1.5
    difficulty_b: float = 6.0


@dataclass
class Crowd:
    items: np.ndarray  # per answer: the item
    workers: np.ndarray  # per answer: the annotator
    agree: np.ndarray  # per answer: agrees with the item's gold answer
    gold_right: np.ndarray  # per item: the gold answer is the true one
    oracle: np.ndarray  # per item: P(gold right | answers, true parameters) under the one-coin model
    accuracy: np.ndarray  # per annotator: accuracy averaged over difficulties
    oracle_difficulty: np.ndarray  # per item: the same under the model that made the answers (difficulty summed out)

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per item: answers agreeing with the gold answer, answers (the count-only view)."""
        n_items = len(self.gold_right)
        return (np.bincount(self.items, weights=self.agree, minlength=n_items).astype(np.int64),
                np.bincount(self.items, minlength=n_items))


def _assignments(spec: CrowdSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(item, annotator) per answer: k rounds of a shuffled item list, cut into batches, batches dealt to
    annotators who take 1–4 in a row."""
    stream = np.concatenate([rng.permutation(spec.n_items) for _ in range(spec.k)])
    n_batches = -(-len(stream) // spec.batch)
    batch_of = np.arange(len(stream)) // spec.batch
    per_annotator = rng.integers(1, 5, size=n_batches)
    owner = np.repeat(np.arange(n_batches), per_annotator)[:n_batches]
    return stream, owner[batch_of]


def crowd_simulate(spec: CrowdSpec, *, seed: int) -> Crowd:
    rng = np.random.default_rng(seed)
    items, workers = _assignments(spec, rng)
    n_workers = int(workers.max()) + 1
    skill = 0.5 + 0.5 * rng.beta(spec.accuracy_a, spec.accuracy_b, size=n_workers)
    skill[rng.random(n_workers) < spec.spammers] = 0.5
    difficulty = rng.beta(1.0, spec.difficulty_b, size=spec.n_items)
    gold_right = rng.random(spec.n_items) >= spec.wrong_gold
    right = rng.random(len(items)) < 0.5 + (skill[workers] - 0.5) * (1.0 - difficulty[items])
    agree = right == gold_right[items]
    accuracy = 0.5 + (skill - 0.5) * (1.0 - 1.0 / (1.0 + spec.difficulty_b))
    weight = logit(np.clip(accuracy, 1e-12, 1 - 1e-12))[workers] * np.where(agree, 1.0, -1.0)
    oracle = expit(logit(1.0 - spec.wrong_gold) + np.bincount(items, weights=weight, minlength=spec.n_items))
    return Crowd(items=items, workers=workers, agree=agree, gold_right=gold_right, oracle=oracle, accuracy=accuracy,
                 oracle_difficulty=_difficulty_oracle(spec, items=items, workers=workers, agree=agree, skill=skill))


def _difficulty_oracle(spec: CrowdSpec, *, items: np.ndarray, workers: np.ndarray, agree: np.ndarray,
                       skill: np.ndarray, points: int = 200) -> np.ndarray:
    """P(gold right | answers, true skills, true share of wrong gold labels), each item's difficulty integrated over
    Beta(1, `difficulty_b`) (midpoint rule on `points` points): the posterior of the model that made the answers."""
    d = (np.arange(points) + 0.5) / points
    log_density = np.log(spec.difficulty_b) + (spec.difficulty_b - 1.0) * np.log1p(-d) - np.log(points)
    q = np.clip(0.5 + (skill[workers, None] - 0.5) * (1.0 - d[None, :]), 1e-12, 1 - 1e-12)
    n_items = spec.n_items
    by_item = sparse.csr_matrix((np.ones(len(items)), (items, np.arange(len(items)))), shape=(n_items, len(items)))
    right = np.asarray(by_item @ np.where(agree[:, None], np.log(q), np.log1p(-q)))
    wrong = np.asarray(by_item @ np.where(agree[:, None], np.log1p(-q), np.log(q)))
    return expit(np.log1p(-spec.wrong_gold) - np.log(spec.wrong_gold)
                 + logsumexp(right + log_density, axis=1) - logsumexp(wrong + log_density, axis=1))


def expected_calibration_error(p: np.ndarray, truth: np.ndarray, *, bins: int = 10) -> float:
    """Σ over equal-width bins of |mean p − share true| weighted by the bin's share of items."""
    p = np.asarray(p, dtype=float)
    truth = np.asarray(truth, dtype=float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    n = np.bincount(which, minlength=bins)
    gap = np.abs(np.bincount(which, weights=p, minlength=bins) - np.bincount(which, weights=truth, minlength=bins))
    return float(gap.sum() / max(len(p), 1)) if n.sum() else 0.0


def coverage(low: np.ndarray, high: np.ndarray, target: np.ndarray, *, tolerance: float = 1e-4) -> float:
    """Share of items whose `target` lies in [low, high] (widened by the exported figures' rounding)."""
    inside = (np.asarray(low) - tolerance <= target) & (target <= np.asarray(high) + tolerance)
    return float(inside.mean()) if len(inside) else 0.0
