"""Per-instance votes: the first k valid responses of each item, votes per answer, majority, borderline."""
from __future__ import annotations

import numpy as np
import pandas as pd

DECISION_VALIDATED = "validated"
DECISION_REJECTED = "rejected"
DECISION_INCOMPLETE = "incomplete"
DECISION_UNKNOWN = "no-correct-answer"


def first_k_responses(*, responses: pd.DataFrame, k: int) -> pd.DataFrame:
    """Valid item responses ranked in time order per item; keeps the first k and adds `rank` and `n_valid`.

    Irregular data: an item with more than k valid responses uses its first k by `answered_at` (ties by id).
    """
    valid = responses[responses["is_valid"] & ~responses["is_screening"] & (responses["item_id"] >= 0)]
    valid = valid.sort_values(["item_id", "answered_at", "response_id"], kind="stable")
    rank = valid.groupby("item_id", sort=False).cumcount().to_numpy()
    n_valid = valid.groupby("item_id", sort=False)["response_id"].transform("size").to_numpy()
    valid = valid.assign(rank=rank, n_valid=n_valid)
    return valid[valid["rank"] < k].reset_index(drop=True)


def instance_votes(*, first_k: pd.DataFrame, items: pd.DataFrame, k: int, m: int) -> pd.DataFrame:
    """One row per item: responses counted, votes for the correct answer, majority answer, decision.

    `majority_correct` is the filter rule (at least m of the first k correct); `borderline` marks a majority of
    exactly m. Items with fewer than k valid responses are `incomplete` and get no decision.
    """
    counted = first_k.groupby("item_id", sort=False).agg(
        n_used=("response_id", "size"), n_valid=("n_valid", "first"),
    )
    per_item = items[["item_id", "external_id", "instance_id", "component", "setup", "correct_answer", "family"]].merge(
        counted, left_on="item_id", right_index=True, how="left",
    )
    per_item["n_used"] = per_item["n_used"].fillna(0).astype("int64")
    per_item["n_valid"] = per_item["n_valid"].fillna(0).astype("int64")
    per_item["complete"] = per_item["n_used"] >= k

    # Votes per answer among the counted responses; the majority is the most frequent answer (ties: none).
    if len(first_k):
        table = pd.crosstab(first_k["item_id"], first_k["answer"])
        values = table.to_numpy()
        top = values.max(axis=1)
        is_tie = (values == top[:, None]).sum(axis=1) > 1
        majority = np.where(is_tie, "", table.columns.to_numpy()[values.argmax(axis=1)].astype(str))
        majority_frame = pd.DataFrame({"majority_answer": majority, "majority_votes": top}, index=table.index)
        per_item = per_item.merge(majority_frame, left_on="item_id", right_index=True, how="left")
    else:
        per_item["majority_answer"] = ""
        per_item["majority_votes"] = 0
    per_item["majority_answer"] = per_item["majority_answer"].fillna("").astype(str)
    per_item["majority_votes"] = per_item["majority_votes"].fillna(0).astype("int64")

    correct_of_item = first_k["item_id"].map(per_item.set_index("item_id")["correct_answer"])
    is_correct = (first_k["answer"] == correct_of_item) & (correct_of_item != "")
    n_correct = is_correct.groupby(first_k["item_id"]).sum()
    per_item["n_correct"] = per_item["item_id"].map(n_correct).fillna(0).astype("int64")
    has_correct = per_item["correct_answer"] != ""
    per_item["majority_correct"] = has_correct & per_item["complete"] & (per_item["n_correct"] >= m)
    per_item["borderline"] = has_correct & per_item["complete"] & (per_item["n_correct"] == m)
    per_item["decision"] = decide(
        complete=per_item["complete"].to_numpy(), has_correct=has_correct.to_numpy(),
        n_correct=per_item["n_correct"].to_numpy(), m=m,
    )
    return per_item.reset_index(drop=True)


def decide(*, complete: np.ndarray, has_correct: np.ndarray, n_correct: np.ndarray, m: int) -> np.ndarray:
    """The majority rule: validated when at least m of the k counted responses are correct."""
    return np.select(
        [~has_correct, ~complete, n_correct >= m],
        [DECISION_UNKNOWN, DECISION_INCOMPLETE, DECISION_VALIDATED],
        default=DECISION_REJECTED,
    )


def decision_is_settled(*, n_correct: int, n_answered: int, k: int, m: int) -> bool:
    """True once the remaining k - n_answered responses can no longer change the majority decision."""
    remaining = k - n_answered
    return n_correct >= m or n_correct + remaining < m
