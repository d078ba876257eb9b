"""The one-coin model with item difficulty, and the test that says when a crowd needs it.

The one-coin model (`scoring.agreement.uncertainty`) gives every annotator one accuracy on every item. Where items
differ much in difficulty it reads a 3–2 split on a hard item as stronger evidence than it is. Here an item belongs
to one of `CLASSES` difficulty classes d (0, 0.1, …, 1): an annotator of skill s answers it right with probability
0.5 + (s − 0.5)(1 − d), i.e. attends with probability 1 − d (and is then right with probability s) and otherwise
guesses; d = 1 is a coin flip for everyone. The share of items in each class is estimated with the annotators' skills
and the share of right gold labels, first by EM (the attending is the missing data that makes every step a count),
then by a Gibbs sampler of the same model started there, as the one-coin model's. An item's probability under each
sweep is summed over its difficulty class, so the interval is the parameters' uncertainty, not the item's own class.

`overdispersion` decides between the two: item difficulty shows as more split items (and more unanimous ones) than
the one-coin model predicts. The test compares the two models' likelihoods (the one-coin model is the difficulty model
with every item in class 0; EM from the one-coin fit): the difficulty model is used when twice the log-likelihood
gained passes `LR_THRESHOLD` (χ² with 10 degrees of freedom at p = 0.001, conservative at the boundary), so that an
ordinary crowd, where the one-coin model is already calibrated, keeps it. Its power is low with few answers per item:
on the simulated crowds of `benchmarks/item_uncertainty.py` (k = 5) the annotators' own accuracies absorb most of
the difficulty, and even items of difficulty Beta(1, 2) do not pass it (docs/benchmarks.md has the figures); so
`difficulty="always"` (opt-in) is there for data known to hold very hard items.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import logsumexp

CLASSES = np.linspace(0.0, 1.0, 11)  # difficulty d of each class
EM_ITERATIONS = 100
EM_TOLERANCE = 1e-4  # log-likelihood gained in an iteration, nats
NEWTON_STEPS = 3
START_SPREAD = 0.1  # the EM starts with this share of items spread over the classes above 0
LR_THRESHOLD = 29.6  # χ²(10) at p = 0.001
EPS = 1e-9
CLASS_PRIOR = 1.0  # Dirichlet prior of the class shares, per class


@dataclass(frozen=True)
class Answers:
    """One row per answer, codes from 0: the item, the annotator, whether it agrees with the item's gold answer."""

    item: np.ndarray
    worker: np.ndarray
    agree: np.ndarray
    n_items: int
    n_workers: int

    def per_item(self) -> sparse.csr_matrix:
        """Items × answers indicator, to sum an answer-level figure over each item's answers."""
        n = len(self.item)
        return sparse.csr_matrix((np.ones(n), (self.item, np.arange(n))), shape=(self.n_items, n))


def _class_loglik(answers: Answers, skill: np.ndarray, by_item: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Items × classes log-likelihood of the item's answers if its gold answer is right (first) or wrong (second)."""
    q = 0.5 + (skill[answers.worker, None] - 0.5) * (1.0 - CLASSES[None, :])
    q = np.clip(q, EPS, 1 - EPS)
    log_q, log_not_q = np.log(q), np.log1p(-q)
    agree = answers.agree[:, None]
    right = by_item @ np.where(agree, log_q, log_not_q)
    wrong = by_item @ np.where(agree, log_not_q, log_q)
    return np.asarray(right), np.asarray(wrong)


def _joint(answers: Answers, skill: np.ndarray, weights: np.ndarray, prior: float,
           by_item: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Items × 2 × classes log joint of (gold right?, class) with the answers; and each item's log-likelihood."""
    right, wrong = _class_loglik(answers, skill, by_item)
    log_w = np.log(np.clip(weights, 1e-300, None))[None, :]
    joint = np.stack([np.log(max(1 - prior, EPS)) + log_w + wrong, np.log(max(prior, EPS)) + log_w + right], axis=1)
    return joint, logsumexp(joint, axis=(1, 2))


def _attending(answers: Answers, skill: np.ndarray, d: np.ndarray, right: np.ndarray) -> np.ndarray:
    """P(the annotator attended | the class d of the item, whether the answer was right), per answer."""
    s = skill[answers.worker]
    q = np.clip(0.5 + (s - 0.5) * (1.0 - d), EPS, 1 - EPS)
    return np.where(right, (1.0 - d) * s / q, (1.0 - d) * (1.0 - s) / (1.0 - q))


def _skill_step(answers: Answers, skill: np.ndarray, responsibility: np.ndarray) -> np.ndarray:
    """The skills that maximise the expected log-likelihood under `responsibility` (items × 2 × classes): Newton
    steps on each annotator's concave objective, kept inside [0, 1]."""
    weight = responsibility[answers.item]  # answers × 2 × classes
    # P(answer right) and whether it was, under "gold wrong" (0) and "gold right" (1)
    right = np.stack([~answers.agree, answers.agree], axis=1)[:, :, None]
    slope = (1.0 - CLASSES)[None, None, :]
    for _ in range(NEWTON_STEPS):
        q = np.clip(0.5 + (skill[answers.worker, None, None] - 0.5) * slope, EPS, 1 - EPS)
        inverse = np.where(right, 1.0 / q, -1.0 / (1.0 - q))
        gradient = np.bincount(answers.worker, weights=(weight * slope * inverse).sum(axis=(1, 2)),
                               minlength=answers.n_workers)
        curvature = np.bincount(answers.worker, weights=(weight * slope**2 * inverse**2).sum(axis=(1, 2)),
                                minlength=answers.n_workers)
        skill = np.clip(skill + gradient / np.maximum(curvature, EPS), 0.0, 1.0)
    return skill


def _attended_counts(answers: Answers, skill: np.ndarray, responsibility: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per annotator, the expected attended answers and attended right answers (the skills' sufficient counts)."""
    attended = np.zeros(answers.n_workers)
    attended_right = np.zeros(answers.n_workers)
    for gold in (0, 1):
        right = answers.agree == bool(gold)
        for c, d in enumerate(CLASSES):
            u = responsibility[answers.item, gold, c] * _attending(answers, skill, d, right)
            attended += np.bincount(answers.worker, weights=u, minlength=answers.n_workers)
            attended_right += np.bincount(answers.worker, weights=u * right, minlength=answers.n_workers)
    return attended, attended_right


def difficulty_em(answers: Answers, *, accuracy: np.ndarray, prior: float) -> dict[str, np.ndarray | float]:
    """Maximum likelihood by EM, started from the one-coin fit (`accuracy` per annotator, `prior`, with most items
    in class 0, so the likelihood starts near the one-coin model's and only rises): the annotators' skills, the class
    shares, the share of right gold labels; per annotator the expected attended answers and right attended answers
    (for the skills' prior); the log-likelihood and each item's P(gold right)."""
    by_item = answers.per_item()
    skill = np.clip(np.asarray(accuracy, dtype=float), 0.0, 1.0)
    weights = np.full(len(CLASSES), START_SPREAD / (len(CLASSES) - 1))
    weights[0] = 1.0 - START_SPREAD
    joint, item_loglik = _joint(answers, skill, weights, prior, by_item)
    loglik = float(item_loglik.sum())
    for _ in range(EM_ITERATIONS):
        responsibility = np.exp(joint - item_loglik[:, None, None])
        skill = _skill_step(answers, skill, responsibility)
        weights = responsibility.sum(axis=(0, 1)) / answers.n_items
        prior = float(responsibility[:, 1, :].sum() / answers.n_items)
        joint, item_loglik = _joint(answers, skill, weights, prior, by_item)
        previous, loglik = loglik, float(item_loglik.sum())
        if loglik - previous < EM_TOLERANCE:
            break
    responsibility = np.exp(joint - item_loglik[:, None, None])
    attended, attended_right = _attended_counts(answers, skill, responsibility)
    return {"skill": skill, "weights": weights, "prior": prior, "attended": attended,
            "attended_right": attended_right, "loglik": loglik, "p_right": responsibility[:, 1, :].sum(axis=1)}


def one_coin_loglik(answers: Answers, accuracy: np.ndarray, prior: float) -> float:
    """The one-coin model's log-likelihood: the difficulty model with every item in class 0."""
    by_item = answers.per_item()
    weights = np.zeros(len(CLASSES))
    weights[0] = 1.0
    return float(_joint(answers, accuracy, weights, prior, by_item)[1].sum())


def overdispersion(*, one_coin: float, difficulty: float, n_items: int) -> dict[str, float | bool]:
    """The test: twice the log-likelihood gained by item difficulty, the gain per item, and the verdict."""
    statistic = max(0.0, 2.0 * (difficulty - one_coin))
    per_item = statistic / 2.0 / max(n_items, 1)
    return {"lr_statistic": round(statistic, 2), "gain_per_item": round(per_item, 4),
            "overdispersed": bool(statistic > LR_THRESHOLD)}


def difficulty_draws(answers: Answers, *, fit: dict, prior_ab: tuple[float, float], seed: int, draws: int,
                     burn_in: int) -> np.ndarray:
    """Items × draws posterior probabilities of the gold answer: Gibbs sweeps of the difficulty model. Each sweep
    draws every item's (gold right?, class) from their joint, whether each answer was attended, then every
    annotator's skill (Beta, with the fitted prior), the class shares (Dirichlet(1)) and the share of right gold
    labels (Beta(1, 1)); the item's probability under the sweep's parameters, summed over classes, is kept."""
    rng = np.random.default_rng(seed)
    by_item = answers.per_item()
    skill, weights, prior = np.asarray(fit["skill"], float), np.asarray(fit["weights"], float), float(fit["prior"])
    n_classes = len(CLASSES)
    kept = np.empty((answers.n_items, draws))
    for sweep in range(burn_in + draws):
        joint, item_loglik = _joint(answers, skill, weights, prior, by_item)
        posterior = np.exp(joint - item_loglik[:, None, None]).reshape(answers.n_items, 2 * n_classes)
        p_right = posterior[:, n_classes:].sum(axis=1)
        if sweep >= burn_in:
            kept[:, sweep - burn_in] = p_right
        state = (rng.random(answers.n_items)[:, None] > np.cumsum(posterior, axis=1)).sum(axis=1)
        state = np.minimum(state, 2 * n_classes - 1)
        gold, klass = state // n_classes, state % n_classes
        right = answers.agree == gold[answers.item].astype(bool)
        d = CLASSES[klass][answers.item]
        attended = rng.random(len(right)) < _attending(answers, skill, d, right)
        hits = np.bincount(answers.worker, weights=attended & right, minlength=answers.n_workers)
        misses = np.bincount(answers.worker, weights=attended & ~right, minlength=answers.n_workers)
        skill = rng.beta(prior_ab[0] + hits, prior_ab[1] + misses)
        weights = rng.dirichlet(CLASS_PRIOR + np.bincount(klass, minlength=n_classes))
        n_right = float(gold.sum())
        prior = float(rng.beta(1.0 + n_right, 1.0 + answers.n_items - n_right))
    return kept

