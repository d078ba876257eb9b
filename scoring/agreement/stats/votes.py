"""Per-instance votes: the first k valid responses of each item, votes per answer, majority, borderline.

Everything is vectorized over integer codes (item position × answer code → one bincount), so 1,000,000
responses take a fraction of a second.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tasks.stel.majority import m_of_k_borderline, m_of_k_out_of_reach, m_of_k_validated
from tasks.stel.posterior import PosteriorRule, posterior_validated

DECISION_VALIDATED = "validated"
DECISION_REJECTED = "rejected"
DECISION_INCOMPLETE = "incomplete"
DECISION_UNKNOWN = "no-correct-answer"


def first_k_responses(*, responses: pd.DataFrame, k: int) -> pd.DataFrame:
    """Valid item responses ranked in time order per item; keeps the first k and adds `rank` and `n_valid`.

    Irregular data: an item with more than k valid responses uses its first k by `answered_at` (ties by id).
    """
    mask = (responses["is_valid"] & ~responses["is_screening"] & (responses["item_id"] >= 0)).to_numpy()
    valid = responses[mask]
    order = np.lexsort((valid["response_id"].to_numpy(), valid["answered_at"].to_numpy(),
                        valid["item_id"].to_numpy()))
    valid = valid.iloc[order]
    item = valid["item_id"].to_numpy()
    n = len(item)
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]]) if n else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.r_[starts, n])
    rank = np.arange(n) - np.repeat(starts, lengths)
    n_valid = np.repeat(lengths, lengths)
    valid = valid.assign(rank=rank, n_valid=n_valid)
    return valid[rank < k].reset_index(drop=True)


@dataclass
class VoteData:
    per_item: pd.DataFrame
    counts: np.ndarray  # items × categories: votes per answer among the counted responses
    categories: list[str]  # the answers given, sorted
    item_pos: np.ndarray  # for each counted response, the row of its item in per_item


def votes_compute(*, first_k: pd.DataFrame, items: pd.DataFrame, k: int, m: int,
                  rule: PosteriorRule | None = None) -> VoteData:
    """One row per item: responses counted, votes for the correct answer, majority answer, decision.

    `majority_correct` is the filter rule (at least m of the first k correct); `borderline` marks a majority of
    exactly m. Items with fewer than k valid responses are `incomplete` and get no decision, unless adaptive
    collection closed them early (`is_closed`): those are decided on the answers they have (`decide`). A study's
    fitted posterior stopping `rule` (tasks/stel/posterior.py) decides its complete and closed items instead.
    """
    per_item = items[["item_id", "external_id", "instance_id", "component", "setup", "correct_answer", "family"]]
    per_item = per_item.reset_index(drop=True).copy()
    n_items = len(per_item)
    item_pos = pd.Index(per_item["item_id"]).get_indexer(first_k["item_id"])
    keep = item_pos >= 0
    first_k = first_k[keep]
    item_pos = item_pos[keep]
    answer_codes, uniques = pd.factorize(first_k["answer"], sort=True)
    categories = [str(u) for u in uniques]
    n_cat = len(categories)
    counts = np.bincount(item_pos * n_cat + answer_codes, minlength=n_items * n_cat).reshape(n_items, n_cat) \
        if n_cat else np.zeros((n_items, 0), dtype=np.int64)

    n_used = counts.sum(axis=1)
    n_valid = np.zeros(n_items, dtype=np.int64)
    n_valid[item_pos] = first_k["n_valid"].to_numpy()
    if n_cat:
        top = counts.max(axis=1)
        tie = (counts == top[:, None]).sum(axis=1) > 1
        majority = np.where(tie | (n_used == 0), "", np.asarray(categories, dtype=object)[counts.argmax(axis=1)])
    else:
        top = np.zeros(n_items, dtype=np.int64)
        majority = np.full(n_items, "", dtype=object)
    correct_code = pd.Index(categories).get_indexer(per_item["correct_answer"])
    n_correct = np.where(correct_code >= 0, counts[np.arange(n_items), np.maximum(correct_code, 0)] if n_cat else 0, 0)
    has_correct = (per_item["correct_answer"] != "").to_numpy()
    complete = n_used >= k
    per_item["n_used"] = n_used
    per_item["n_valid"] = n_valid
    per_item["complete"] = complete
    per_item["majority_answer"] = majority.astype(str)
    per_item["majority_votes"] = top
    per_item["n_correct"] = n_correct.astype(np.int64)
    per_item["majority_correct"] = has_correct & complete & m_of_k_validated(n_correct, m)
    per_item["borderline"] = has_correct & complete & m_of_k_borderline(n_correct, m)
    closed = per_item_closed(items, per_item)
    per_item["closed_early"] = closed & ~complete
    per_item["decision"] = decide(complete=complete, has_correct=has_correct, n_correct=n_correct, m=m,
                                  closed=closed, n_used=n_used, k=k, rule=rule)
    return VoteData(per_item=per_item, counts=counts, categories=categories, item_pos=item_pos)


def instance_votes(*, first_k: pd.DataFrame, items: pd.DataFrame, k: int, m: int,
                   rule: PosteriorRule | None = None) -> pd.DataFrame:
    return votes_compute(first_k=first_k, items=items, k=k, m=m, rule=rule).per_item


def per_item_closed(items: pd.DataFrame, per_item: pd.DataFrame) -> np.ndarray:
    if "is_closed" not in items:
        return np.zeros(len(per_item), dtype=bool)
    closed = pd.Series(items["is_closed"].to_numpy(dtype=bool), index=items["item_id"].to_numpy())
    return closed.reindex(per_item["item_id"]).fillna(False).to_numpy(dtype=bool)


def decide(*, complete: np.ndarray, has_correct: np.ndarray, n_correct: np.ndarray, m: int,
           closed: np.ndarray | None = None, n_used: np.ndarray | None = None, k: int | None = None,
           rule: PosteriorRule | None = None) -> np.ndarray:
    """The m-of-k rule (`tasks.stel.majority`): validated when at least m of the k counted responses are correct.

    An item adaptive collection closed before k responses (`closed`) is decided on the answers it has, which is
    what closed it: validated once m are correct, rejected once m can no longer be reached; and, in a study with a
    model guide (`annotation.services.guidance`), validated when its first answers were all correct, rejected when
    they were all wrong. The answers are people's; the guide only decided when to stop asking.

    With a fitted posterior stopping `rule` (tasks/stel/posterior.py), every item with answers that is complete or
    closed is validated when P(gold right | its answers) reaches the rule's stop threshold, rejected otherwise."""
    decision = np.select(
        [~has_correct, ~complete, m_of_k_validated(n_correct, m)],
        [DECISION_UNKNOWN, DECISION_INCOMPLETE, DECISION_VALIDATED],
        default=DECISION_REJECTED,
    )
    if closed is None or n_used is None or k is None:
        return decision
    if rule is not None and rule.fitted:
        ended = (complete | closed) & has_correct & (n_used > 0)
        validated = posterior_validated(n_correct, n_used - n_correct, m=m, rule=rule)
        return np.where(ended, np.where(validated, DECISION_VALIDATED, DECISION_REJECTED), decision)
    early = closed & ~complete & has_correct & (n_used > 0)
    n_wrong = n_used - n_correct
    validated = early & (m_of_k_validated(n_correct, m) | (n_wrong == 0))
    rejected = early & ~validated & (m_of_k_out_of_reach(n_wrong, k, m) | (n_correct == 0))
    decision = np.where(validated, DECISION_VALIDATED, decision)
    return np.where(rejected, DECISION_REJECTED, decision)

