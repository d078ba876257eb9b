"""Stopping on the posterior: an item stops collecting once the pooled one-coin posterior P(gold right | its answers)
reaches a high threshold (validated) or can no longer reach it within k answers (dropped), or falls to an optional
low threshold (dropped early).

The pooled one-coin model (scoring/agreement/uncertainty.py, `pooled_parameters`): every answer agrees with a right
gold label with one probability a (the vote accuracy), a wrong gold label is wrong with the same probability, and a
gold label is right with prior probability π (the share of right gold labels). For an item with c answers agreeing
with its gold label and w disagreeing the posterior is closed form:

    logit P(gold right | c, w) = logit π + (c − w) · logit a

so the engine's decision is arithmetic on the two stored parameters (`Study.posterior_fit`, written by the refit
job, scoring/agreement/posterior_fit.py): no EM per request. Without usable parameters (before the pilot is fitted;
a fit with a ≤ 0.5, which carries no evidence; or with π = 1, where every item would pass on its prior alone) the
rule is m of k (tasks/stel/majority.py), for stopping and for the decision alike.

The decision validates only above the high threshold (an item with P < t after k answers is dropped, where 3 of 5
would keep a 3–2 split): with 90 % of gold labels right the prior alone says "probably right", so a rule that
validated whenever P ≥ 0.5 would keep a 2-of-5 item (docs/benchmarks.md, issue 32).

Every function takes plain integers or numpy arrays of them (the filter decides many items in one call);
`benchmarks/item_uncertainty.py` replays simulated crowds through these same functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tasks.stel.majority import m_of_k_final, m_of_k_validated


@dataclass(frozen=True)
class PosteriorRule:
    """A study's posterior rule: the thresholds and, once fitted, the pooled model's parameters."""

    stop: float  # validate once P ≥ stop
    drop: float | None = None  # drop once P ≤ drop (None: only once `stop` is out of reach)
    vote_accuracy: float | None = None
    share_gold_right: float | None = None

    @property
    def fitted(self) -> bool:
        a, pi = self.vote_accuracy, self.share_gold_right
        return a is not None and pi is not None and 0.5 < a < 1.0 and 0.0 < pi < 1.0

    def log_odds(self, correct: Any, wrong: Any) -> Any:
        a, pi = float(self.vote_accuracy or 0.0), float(self.share_gold_right or 0.0)
        return math.log(pi / (1.0 - pi)) + (correct - wrong) * math.log(a / (1.0 - a))


def posterior_rule_of(*, stop: float | None, drop: float | None, fit: dict[str, Any] | None) -> PosteriorRule | None:
    """The rule of a study's settings and stored fit (`Study.posterior_stop`, `posterior_drop`, `posterior_fit`);
    None where the study has no posterior stop."""
    if stop is None:
        return None
    fit = fit or {}
    return PosteriorRule(stop=float(stop), drop=None if drop is None else float(drop),
                         vote_accuracy=fit.get("vote_accuracy"), share_gold_right=fit.get("share_gold_right"))


def posterior_right(correct: Any, wrong: Any, *, rule: PosteriorRule) -> Any:
    """P(gold right | c agreeing, w disagreeing answers) under the rule's fitted parameters."""
    log_odds = rule.log_odds(correct, wrong)
    if isinstance(log_odds, float):
        return 1.0 / (1.0 + math.exp(-log_odds))
    import numpy as np  # the vectorised path only

    return 1.0 / (1.0 + np.exp(-log_odds))


def posterior_final(correct: Any, wrong: Any, *, k: int, m: int, rule: PosteriorRule | None) -> Any:
    """No further answer is asked for: validated (P ≥ stop), dropped (P ≤ drop, or stop out of reach even if every
    remaining answer up to k agrees), or k answers in. m of k where the rule is off or not fitted yet."""
    if rule is None or not rule.fitted:
        return m_of_k_final(correct, wrong, k, m)
    remaining = k - (correct + wrong)
    validated = rule.log_odds(correct, wrong) >= _logit(rule.stop)
    unreachable = rule.log_odds(correct + remaining, wrong) < _logit(rule.stop)
    dropped = unreachable | (remaining <= 0)
    if rule.drop is not None:
        dropped = dropped | (rule.log_odds(correct, wrong) <= _logit(rule.drop))
    return validated | dropped


def posterior_validated(correct: Any, wrong: Any, *, m: int, rule: PosteriorRule | None) -> Any:
    """The decision of an item the rule stopped (or that has its k answers): validated when P ≥ stop; m of k where
    the rule is off or not fitted yet."""
    if rule is None or not rule.fitted:
        return m_of_k_validated(correct, m)
    return rule.log_odds(correct, wrong) >= _logit(rule.stop)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p)) if 0.0 < p < 1.0 else (math.inf if p >= 1.0 else -math.inf)
