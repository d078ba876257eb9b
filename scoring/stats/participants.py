"""Per-participant statistics: accuracy on instances and screening questions, agreement with the majority,
answers given, median seconds per item."""
from __future__ import annotations

import numpy as np
import pandas as pd


def participant_stats(
    *, responses: pd.DataFrame, per_item: pd.DataFrame, participants: pd.DataFrame
) -> list[dict]:
    """One entry per participant who answered anything, ordered by participant id."""
    if responses.empty:
        return []
    items = responses[~responses["is_screening"] & (responses["item_id"] >= 0)]
    screening = responses[responses["is_screening"]]
    lookup = per_item.set_index("item_id")
    correct = items["item_id"].map(lookup["correct_answer"]).fillna("")
    majority = items["item_id"].map(lookup["majority_answer"]).fillna("")
    frame = pd.DataFrame({
        "participant_id": items["participant_id"],
        "correct": np.where(correct != "", (items["answer"] == correct).astype(float), np.nan),
        "agrees": np.where(majority != "", (items["answer"] == majority).astype(float), np.nan),
        "seconds": items["seconds"],
        "valid": items["is_valid"].astype(float),
    })
    grouped = frame.groupby("participant_id")
    table = pd.DataFrame({
        "answers": grouped.size(),
        "valid_answers": grouped["valid"].sum(),
        "accuracy": grouped["correct"].mean(),
        "majority_agreement": grouped["agrees"].mean(),
        "median_seconds": grouped["seconds"].median(),
    })
    screen = screening.groupby("participant_id")["is_correct"].agg(["mean", "size"])
    table = table.join(screen.rename(columns={"mean": "screening_accuracy", "size": "screening_answers"}), how="outer")
    table = table.join(participants.set_index("participant_id")[["external_id", "excluded"]], how="left")
    table = table.sort_index()
    out = []
    for pid, row in table.iterrows():
        out.append({
            "participant_id": int(pid),
            "external_id": str(row["external_id"]) if isinstance(row["external_id"], str) else "",
            "excluded": bool(row["excluded"]) if row["excluded"] == row["excluded"] else False,
            "answers": _int(row["answers"]),
            "valid_answers": _int(row["valid_answers"]),
            "accuracy": _float(row["accuracy"]),
            "screening_answers": _int(row["screening_answers"]),
            "screening_accuracy": _float(row["screening_accuracy"]),
            "majority_agreement": _float(row["majority_agreement"]),
            "median_seconds": _float(row["median_seconds"]),
        })
    return out


def _float(value: object) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), 6)


def _int(value: object) -> int:
    return 0 if value is None or pd.isna(value) else int(value)
