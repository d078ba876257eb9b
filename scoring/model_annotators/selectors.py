"""Reads of model answers: the long frame of one run's answers, and each item's verdict across orders."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scoring.models import ModelAnswer, ModelRun

ANSWER_COLUMNS = ["item_id", "question", "order", "answer", "value", "status", "is_correct", "from_cache",
                  "displayed_answer", "option_index"]


def model_answers_frame(*, run: ModelRun, question: str | None = None) -> pd.DataFrame:
    """One row per (item, question, order) asked: the canonical answer ('' for none) and how it came."""
    rows = ModelAnswer.objects.filter(run=run)
    if question is not None:
        rows = rows.filter(question=question)
    frame = pd.DataFrame.from_records(
        list(rows.values_list("study_item_id", "question", "order", "answer", "value", "status", "is_correct",
                              "from_cache", "displayed_answer", "option_index")),
        columns=ANSWER_COLUMNS)
    frame["item_id"] = frame["item_id"].astype("int64")
    frame["is_correct"] = pd.to_numeric(frame["is_correct"], errors="coerce").astype("float64")
    return frame


def item_verdicts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per (item, question): how many orders were asked and answered, whether the answers differ between orders
    (order-sensitive), the answer given in every order (`consistent`, '' when there is none), the answer in the
    first order asked (`first`), and the share of orders answered correctly (no answer counts as wrong)."""
    if answers.empty:
        return pd.DataFrame(columns=["item_id", "question", "n_orders", "n_answered", "n_distinct", "order_sensitive",
                                     "consistent", "first", "correct_share"])
    data = answers.sort_values(["item_id", "question", "order"], kind="stable")
    answered = data[data["answer"] != ""]
    groups = data.groupby(["item_id", "question"], sort=True)
    out = groups.agg(n_orders=("order", "size"), correct_share=("is_correct", lambda s: float(np.nan_to_num(
        s.to_numpy(dtype="float64"), nan=0.0).mean()) if s.notna().any() else np.nan)).reset_index()
    by = answered.groupby(["item_id", "question"], sort=True)["answer"]
    stats = pd.DataFrame({"n_answered": by.size(), "n_distinct": by.nunique()}).reset_index()
    out = out.merge(stats, on=["item_id", "question"], how="left").fillna({"n_answered": 0, "n_distinct": 0})
    out[["n_answered", "n_distinct"]] = out[["n_answered", "n_distinct"]].astype("int64")
    first_asked = data.groupby(["item_id", "question"], sort=True)["answer"].first().rename("first").reset_index()
    out = out.merge(first_asked, on=["item_id", "question"], how="left")
    single = answered.groupby(["item_id", "question"], sort=True)["answer"].first().rename("_one").reset_index()
    out = out.merge(single, on=["item_id", "question"], how="left")
    out["order_sensitive"] = out["n_distinct"] > 1
    every = (out["n_answered"] == out["n_orders"]) & (out["n_distinct"] == 1)
    out["consistent"] = np.where(every, out["_one"].fillna(""), "")
    return out.drop(columns="_one")


# A model that picks the first option listed this often answers by position, not by what the options say (chance is
# one over the number of options: 0.5 for two); one whose answer changes with the order of display this often has
# answers that depend on the order shown. Both are said in words wherever their figures are shown.
POSITION_BIAS_SHARE = 0.8
ORDER_SENSITIVE_SHARE = 0.5


def order_warnings(figures: dict[str, Any]) -> list[str]:
    """The warnings of a model's figures (`first_option_share`, `order_sensitive_share`), in words."""
    warnings = []
    first = figures.get("first_option_share")
    if first is not None and first >= POSITION_BIAS_SHARE:
        warnings.append(f"picks the first option in {100 * first:.0f} % of items: position bias (its answer follows "
                        "where an option is shown, not what it says)")
    sensitive = figures.get("order_sensitive_share")
    if sensitive is not None and sensitive >= ORDER_SENSITIVE_SHARE:
        warnings.append(f"changes its answer when only the order of display changes in {100 * sensitive:.0f} % of "
                        "items: order-sensitive (its answers depend on the order shown)")
    return warnings


def run_overview(run: ModelRun) -> dict[str, Any]:
    """What the run's job row, the CLI and the list page show: accuracy on known-answer items, order sensitivity,
    answers by status."""
    answers = model_answers_frame(run=run)
    verdicts = item_verdicts(answers)
    # is_correct is stored False for no answer on a known-answer item, empty on items without a correct answer.
    known = answers[answers["is_correct"].notna()]
    answered = answers[answers["answer"] != ""]
    correct = known["is_correct"]
    with_orders = verdicts[verdicts["n_answered"] >= 2]
    return {
        "items": int(verdicts["item_id"].nunique()) if len(verdicts) else 0,
        "asks": len(answers),
        "answered": int((answers["answer"] != "").sum()),
        "by_status": {str(k): int(v) for k, v in answers["status"].value_counts().sort_index().items()},
        "accuracy": float(correct.mean()) if len(known) else None,
        "accuracy_answered": float(known.loc[known["answer"] != "", "is_correct"].mean())
        if (known["answer"] != "").any() else None,
        "known_answer_asks": len(known),
        "order_sensitive_share": float(with_orders["order_sensitive"].mean()) if len(with_orders) else None,
        "order_sensitive_items": int(with_orders["order_sensitive"].sum()),
        "first_option_share": float((pd.to_numeric(answered["option_index"], errors="coerce") == 0).mean())
        if len(answered) else None,
        "consistent_items": int((verdicts["consistent"] != "").sum()) if len(verdicts) else 0,
    }

