"""The m-of-k rule: a task instance is validated when at least m of the k people counted for it chose the correct
answer (STEL: 3 of 5), rejected otherwise. Written once here; the agreement statistics and the filter (`scoring`),
adaptive collection (`annotation.services.engine`) and the study defaults (`annotation.services.studies`) import it.

Every function takes plain integers or numpy arrays of them (the filter decides a million items in one call).
"""
from __future__ import annotations

from typing import Any


def min_correct_default(k: int) -> int:
    """The default m: a strict majority of k (3 of 5, as STEL)."""
    return k // 2 + 1


def m_of_k_validated(n_correct: Any, m: int) -> Any:
    """Validated: at least m of the counted answers are correct."""
    return n_correct >= m


def m_of_k_out_of_reach(n_wrong: Any, k: int, m: int) -> Any:
    """Rejected whatever the remaining answers are: more than k − m of the k are already wrong."""
    return n_wrong > k - m


def m_of_k_final(n_correct: Any, n_wrong: Any, k: int, m: int) -> Any:
    """No further answer can change the decision: validated already, or validation is out of reach."""
    return m_of_k_validated(n_correct, m) | m_of_k_out_of_reach(n_wrong, k, m)


def m_of_k_borderline(n_correct: Any, m: int) -> Any:
    """Validated by exactly m correct answers: one answer fewer would have rejected it."""
    return n_correct == m


def stel_surplus_correct(n_incorrect: Any, k: int) -> Any:
    """STEL's rule for an item with more than k valid answers (eval_annotations.py): surplus votes are removed
    correct ones first, so the item keeps min(k, incorrect) incorrect votes and k − that many correct ones."""
    # heavy: numpy loads only when the vectorised path runs (the rule itself needs none)
    import numpy as np

    return np.maximum(0, k - np.asarray(n_incorrect))
