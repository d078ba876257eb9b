"""STEL's decision rule and its accuracy with undecided instances counted as 0.5.

The one home of the rule: `scoring.model_scoring` scores methods with it, `tasks.services.leaks` scores surface
features with it."""
from __future__ import annotations

import zlib

import numpy as np

UNDECIDED, S1_S2, S2_S1 = 0, 1, 2  # STEL's coding of a prediction
# Sides closer than this count as equal: mathematically equal similarities computed along different float paths
# (e.g. another summation order) differ by ~1e-16, and a tie must not depend on that.
TIE_TOLERANCE = 1e-12


def predictions_decide(sim_a1_s1: np.ndarray, sim_a1_s2: np.ndarray, sim_a2_s2: np.ndarray,
                       sim_a2_s1: np.ndarray, is_quadruple: np.ndarray) -> np.ndarray:
    """1 (S1-S2), 2 (S2-S1) or 0 (undecided) per instance.

    Quadruples: S1-S2 when (1 − sim(A1,S1))² + (1 − sim(A2,S2))² < (1 − sim(A1,S2))² + (1 − sim(A2,S1))², S2-S1
    when greater, undecided when equal (within TIE_TOLERANCE). Triples (and style-or-content): the alternative
    more similar to A1, undecided on a tie. The A2 similarities of triples are ignored (pass NaN).
    """
    quad_keep = (1 - sim_a1_s1) ** 2 + (1 - sim_a2_s2) ** 2
    quad_swap = (1 - sim_a1_s2) ** 2 + (1 - sim_a2_s1) ** 2
    quad_margin = quad_swap - quad_keep
    quad = np.where(quad_margin > TIE_TOLERANCE, S1_S2, np.where(quad_margin < -TIE_TOLERANCE, S2_S1, UNDECIDED))
    triple_margin = sim_a1_s1 - sim_a1_s2
    triple = np.where(triple_margin > TIE_TOLERANCE, S1_S2,
                      np.where(triple_margin < -TIE_TOLERANCE, S2_S1, UNDECIDED))
    return np.where(is_quadruple, quad, triple).astype(np.int64)


def accuracy_with_undecided(predictions: np.ndarray, correct: np.ndarray) -> float:
    """STEL's accuracy: decided instances count 1 when right, undecided ones 0.5 (the weighted mean of 0.5 and
    the accuracy on the decided instances)."""
    if len(predictions) == 0:
        return float("nan")
    right = np.count_nonzero(predictions == correct)
    undecided = np.count_nonzero(predictions == UNDECIDED)
    return float((right + 0.5 * undecided) / len(predictions))


def accuracy_stel(predictions: np.ndarray, correct: np.ndarray) -> float:
    """The accuracy STEL's code reports (`get_rnd_adapted_accuracy` in eval_on_tasks.py): the same weighted mean as
    `accuracy_with_undecided`, except that it is exactly 0.5 whenever the undecided instances are at least as many
    as the decided ones, however many of the decided ones are right. Reported beside the plain rule."""
    if len(predictions) == 0:
        return float("nan")
    undecided = int(np.count_nonzero(predictions == UNDECIDED))
    if undecided >= len(predictions) - undecided:
        return 0.5
    return accuracy_with_undecided(predictions, correct)


def predictions_force(predictions: np.ndarray, *, seed: int, method: str) -> np.ndarray:
    """Decided predictions unchanged; undecided ones replaced by a random 1 or 2, reproducible from the seed and
    the method's name (so adding a method to a run does not change another method's draws)."""
    rng = np.random.default_rng([seed, zlib.crc32(method.encode("utf-8"))])
    draws = rng.integers(1, 3, size=len(predictions))
    return np.where(predictions == UNDECIDED, draws, predictions).astype(np.int64)
