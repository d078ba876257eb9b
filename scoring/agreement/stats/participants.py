"""Per-participant statistics: accuracy on instances and screening questions, agreement with the majority,
answers given, median seconds per item (vectorized: bincounts over participant codes)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _mean_by(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per-code mean of `values`, ignoring NaN; NaN where a code has no value."""
    ok = ~np.isnan(values)
    total = np.bincount(codes[ok], weights=values[ok], minlength=n)
    count = np.bincount(codes[ok], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def participant_stats(
    *, responses: pd.DataFrame, per_item: pd.DataFrame, participants: pd.DataFrame
) -> list[dict]:
    """One entry per participant who answered anything, ordered by participant id."""
    if responses.empty:
        return []
    codes, people = pd.factorize(responses["participant_id"], sort=True)
    n = len(people)
    is_item = (~responses["is_screening"] & (responses["item_id"] >= 0)).to_numpy()
    pos = pd.Index(per_item["item_id"]).get_indexer(responses["item_id"].to_numpy()[is_item])
    known = pos >= 0
    item_codes = codes[is_item][known]
    answers = responses["answer"].to_numpy()[is_item][known]
    correct = per_item["correct_answer"].to_numpy()[pos[known]]
    majority = per_item["majority_answer"].to_numpy()[pos[known]]
    scored = np.where(correct != "", (answers == correct).astype(float), np.nan)
    agrees = np.where(majority != "", (answers == majority).astype(float), np.nan)
    valid = responses["is_valid"].to_numpy()[is_item][known]
    seconds = responses["seconds"].to_numpy(dtype="float64")[is_item][known]
    screen = responses["is_screening"].to_numpy()
    screen_correct = responses["is_correct"].to_numpy(dtype="float64")[screen]

    answers_n = np.bincount(item_codes, minlength=n)
    valid_n = np.bincount(item_codes[valid], minlength=n)
    accuracy = _mean_by(item_codes, scored, n)
    agreement = _mean_by(item_codes, agrees, n)
    screen_n = np.bincount(codes[screen], minlength=n)
    screen_acc = _mean_by(codes[screen], screen_correct, n)
    median = pd.Series(seconds).groupby(item_codes).median().reindex(range(n)).to_numpy()
    info = participants.set_index("participant_id").reindex(people)
    external = info["external_id"].fillna("").astype(str).to_numpy()
    excluded = info["excluded"].fillna(False).astype(bool).to_numpy()
    return [
        {
            "participant_id": int(people[i]), "external_id": external[i], "excluded": bool(excluded[i]),
            "answers": int(answers_n[i]), "valid_answers": int(valid_n[i]), "accuracy": _float(accuracy[i]),
            "screening_answers": int(screen_n[i]), "screening_accuracy": _float(screen_acc[i]),
            "majority_agreement": _float(agreement[i]), "median_seconds": _float(median[i]),
        }
        for i in range(n)
    ]


def _float(value: float) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 6)
