"""Per-item uncertainty: how likely each item's gold answer is the one careful annotators give, with an interval.

Ordering items (STEL quadruples and triples). Each answer is recoded as "agrees with the item's gold answer" or not,
and a one-coin Dawid–Skene model (crowd-kit's `OneCoinDawidSkene`, EM) is fitted over the study's annotators: every
annotator answers correctly with one probability of their own, and an item's gold answer is right with a prior
probability (one minus the share of wrong gold labels), both estimated. Recoding is exact for a one-coin model (it
treats both answers alike), and it makes the model's class prior the share of right gold labels.

The estimates carry uncertainty of their own (an annotator seen on 14 items is not known to the third decimal), so
the item's probability is integrated over it: `DRAWS` draws of every annotator's accuracy and of the prior from the
Beta distributions of the EM's expected counts (a uniform prior each), the item's posterior computed under each
draw. `p_correct` is the mean over the draws, `p_correct_low`/`p_correct_high` the central `LEVEL` interval: where
the posterior would lie if the accuracies and the share of wrong gold labels were known exactly.
`benchmarks/item_uncertainty.py` measures both on simulated crowds with known truth (calibration error, coverage).

Where items differ much in difficulty the one-coin model reads a split on a hard item as stronger evidence than it
is; `scoring.agreement.item_difficulty` holds the variant with item difficulty classes and the overdispersion test
that chooses it (`difficulty="auto"`, the default; "always" and "never" force the choice). The test's verdict and
statistic are in the facts. A study chooses with its `uncertainty_model` setting (auto, one_coin, item_difficulty:
`study_uncertainty`), and its facts' `model_choice` says which model was used and why.

Count-only data (a vote count per item, no annotator identity: STEL's published "# Votes out of 5") cannot tell
annotators apart, so it gets the pooled one-coin model: every vote right with one shared probability, fitted by
the same EM over the items (all votes given to one pooled annotator), and says so in `model`.

Likert items get their rating distribution and a bootstrap interval of the mean (`likert_uncertainty`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import betaln, expit, logit

from scoring.agreement import item_difficulty
from scoring.agreement.positional_ids import positional_ids

DRAWS = 400
BURN_IN = 100
PRIOR_FLOOR, PRIOR_CEILING = 0.5, 1000.0  # bounds of the accuracy prior's Beta parameters
LEVEL = 0.90
DIGITS = 4  # exported figures are rounded, so that the same data gives the same bytes on every machine
EM_ITERATIONS = 100
POOLED = "pooled"
DIFFICULTY_CHOICES = ("auto", "never", "always")

MODEL_ANNOTATORS = "one-coin Dawid-Skene over annotators"
MODEL_DIFFICULTY = "one-coin Dawid-Skene with item difficulty classes over annotators"
MODEL_POOLED = "pooled one-coin (count-only: no annotator identity)"
MODEL_LIKERT = "rating distribution, bootstrap interval of the mean"


@dataclass
class ItemUncertainty:
    """One row per item (`item`, `p_correct`, `p_correct_low`, `p_correct_high`) and what the model estimated."""

    per_item: pd.DataFrame
    model: str
    facts: dict[str, Any] = field(default_factory=dict)


def _one_coin_em(data: pd.DataFrame) -> pd.Series:
    """P(gold answer right) per task from crowd-kit's one-coin EM on agree (1) / disagree (0) labels."""
    # crowd-kit (and the nltk and scipy it pulls in) is imported here, where the uncertainty is computed, so that
    # every web and command process does not pay half a second for it at start.
    from crowdkit.aggregation import OneCoinDawidSkene

    model = OneCoinDawidSkene(n_iter=EM_ITERATIONS, tol=1e-5)
    probas = model.fit_predict_proba(data).reindex(columns=[0, 1]).fillna(0.0)
    return probas[1]


def accuracy_prior(correct: np.ndarray, answers: np.ndarray) -> tuple[float, float]:
    """Beta(a, b) of the annotators' accuracies, fitted by maximum likelihood to their expected right answers
    (beta-binomial, empirical Bayes): an annotator seen on few items is pulled towards the crowd they belong to."""
    from scipy.optimize import minimize  # used here only; scipy.optimize costs a third of a second to import

    def negative_log_likelihood(log_ab: np.ndarray) -> float:
        a, b = np.exp(log_ab)
        return -float(np.sum(betaln(correct + a, answers - correct + b) - betaln(a, b)))

    if len(correct) < 2:
        return 1.0, 1.0
    found = minimize(negative_log_likelihood, x0=np.log([2.0, 1.0]), method="Nelder-Mead",
                     options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 2000})
    # Where every annotator agrees on everything the likelihood runs off to b = 0 (everyone always right); a floor
    # of 0.5 (Jeffreys' prior) keeps an annotator seen on few items from being taken as infallible.
    a, b = np.clip(np.exp(found.x), PRIOR_FLOOR, PRIOR_CEILING)
    return float(a), float(b)


def _draws(*, signs: sparse.csr_matrix, worker_codes: np.ndarray, agree: np.ndarray, item_codes: np.ndarray,
           start: np.ndarray, prior_ab: tuple[float, float], seed: int, draws: int, burn_in: int) -> np.ndarray:
    """Items × draws posterior probabilities of the gold answer: a Gibbs sampler of the one-coin model with uniform
    priors, started from the EM's answer. Each sweep draws which gold answers are right, then every annotator's
    accuracy and the share of right gold labels from their Beta posteriors given those; the item's probability under
    each sweep's parameters is kept (so the uncertainty of "which items are right" reaches the parameters too)."""
    rng = np.random.default_rng(seed)
    n_items, n_workers = signs.shape
    answers = np.bincount(worker_codes, minlength=n_workers).astype(float)
    eps = 1e-12
    right = rng.random(n_items) < start
    kept = np.empty((n_items, draws))
    for sweep in range(burn_in + draws):
        correct = np.bincount(worker_codes, weights=(agree == right[item_codes]), minlength=n_workers)
        accuracy = rng.beta(prior_ab[0] + correct, prior_ab[1] + answers - correct)
        n_right = float(right.sum())
        prior = rng.beta(1.0 + n_right, 1.0 + n_items - n_right)
        probability = expit(signs @ logit(np.clip(accuracy, eps, 1 - eps)) + logit(np.clip(prior, eps, 1 - eps)))
        right = rng.random(n_items) < probability
        if sweep >= burn_in:
            kept[:, sweep - burn_in] = probability
    return kept


def one_coin_uncertainty(*, items: np.ndarray, workers: np.ndarray, agree: np.ndarray, seed: int = 0,
                         draws: int = DRAWS, level: float = LEVEL, model: str = MODEL_ANNOTATORS,
                         digits: int | None = DIGITS, difficulty: str = "auto") -> ItemUncertainty:
    """One answer per row: the item, who gave it, whether it agrees with the item's gold answer.

    `difficulty`: "auto" fits the model with item difficulty classes (`scoring.agreement.item_difficulty`) where
    the answers are overdispersed against the one-coin model (the test and its figures go into the facts), "never"
    keeps the one-coin model, "always" uses the difficulty model. The pooled model never uses it."""
    if difficulty not in DIFFICULTY_CHOICES:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTY_CHOICES)}, not {difficulty!r}")
    agree = np.asarray(agree, dtype=bool)
    item_codes, item_names = pd.factorize(pd.Series(items), sort=True)
    worker_codes, worker_names = pd.factorize(pd.Series(workers).astype(str), sort=True)
    data = pd.DataFrame({"task": item_codes, "worker": worker_codes, "label": agree.astype(int)})
    right = _one_coin_em(data).reindex(range(len(item_names))).to_numpy(dtype=float)
    # Expected right answers per annotator under the EM's posterior, and answers given.
    r = right[item_codes]
    correct = np.bincount(worker_codes, weights=np.where(agree, r, 1.0 - r), minlength=len(worker_names))
    answers = np.bincount(worker_codes, minlength=len(worker_names)).astype(float)
    test: dict[str, Any] | None = None
    fit = None
    if difficulty != "never" and model != MODEL_POOLED and len(item_names) > 1:
        coded = item_difficulty.Answers(item=item_codes, worker=worker_codes, agree=agree,
                                        n_items=len(item_names), n_workers=len(worker_names))
        em_accuracy = correct / np.maximum(answers, 1.0)  # the one-coin EM's, where both models start
        fit = item_difficulty.difficulty_em(coded, accuracy=em_accuracy, prior=float(right.mean()))
        one_coin = item_difficulty.one_coin_loglik(coded, em_accuracy, float(right.mean()))
        test = item_difficulty.overdispersion(one_coin=one_coin, difficulty=float(fit["loglik"]),
                                              n_items=len(item_names))
        if difficulty == "auto" and not test["overdispersed"]:
            fit = None
    if fit is not None:
        model = MODEL_DIFFICULTY
        correct, answers = np.asarray(fit["attended_right"]), np.asarray(fit["attended"])
        right = np.asarray(fit["p_right"])
        prior_ab = accuracy_prior(correct, answers)
        posterior = item_difficulty.difficulty_draws(coded, fit=fit, prior_ab=prior_ab, seed=seed, draws=draws,
                                                     burn_in=BURN_IN)
    else:
        signs = sparse.csr_matrix((np.where(agree, 1.0, -1.0), (item_codes, worker_codes)),
                                  shape=(len(item_names), len(worker_names)))
        prior_ab = accuracy_prior(correct, answers)
        posterior = _draws(signs=signs, worker_codes=worker_codes, agree=agree, item_codes=item_codes, start=right,
                           prior_ab=prior_ab, seed=seed, draws=draws, burn_in=BURN_IN)
    tail = (1.0 - level) / 2
    low, high = np.quantile(posterior, [tail, 1.0 - tail], axis=1)
    figures = {"p_correct": posterior.mean(axis=1), "p_correct_low": low, "p_correct_high": high}
    if digits is not None:
        figures = {name: values.round(digits) for name, values in figures.items()}
    per_item = pd.DataFrame({"item": np.asarray(item_names), **figures})
    accuracy = (correct + prior_ab[0]) / (answers + prior_ab[0] + prior_ab[1])
    facts = {"model": model, "annotators": len(worker_names), "items": len(item_names), "answers": int(len(agree)),
             "share_gold_right": round(float(right.mean()), DIGITS) if len(right) else None,
             "annotator_accuracy_median": round(float(np.median(accuracy)), DIGITS) if len(accuracy) else None,
             "draws": draws, "level": level, "seed": seed}
    if test is not None:
        facts["overdispersion"] = test
    if fit is not None:
        weights = np.asarray(fit["weights"])
        facts["item_difficulty_mean"] = round(float(weights @ item_difficulty.CLASSES), DIGITS)
    if model == MODEL_POOLED:
        facts["vote_accuracy"] = round(float(accuracy[0]), DIGITS) if len(accuracy) else None
    return ItemUncertainty(per_item=per_item, model=model, facts=facts)


def _votes_as_answers(*, n_correct: np.ndarray, n_votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Count-only votes as one answer per row: each answer's item (its position in the arrays) and whether it agrees
    with the gold answer. Within each item its first n_correct votes agree (the order carries no information)."""
    rows = np.repeat(np.arange(len(n_votes)), n_votes)
    rank = np.arange(len(rows)) - np.repeat(np.cumsum(n_votes) - n_votes, n_votes)
    return rows, rank < np.repeat(n_correct, n_votes)


def pooled_uncertainty(*, items: np.ndarray, n_correct: np.ndarray, n_votes: np.ndarray, seed: int = 0,
                       draws: int = DRAWS, level: float = LEVEL, digits: int | None = DIGITS) -> ItemUncertainty:
    """Count-only data: `n_correct` of `n_votes` votes for the gold answer per item, annotators unknown. Every vote
    is given to one pooled annotator, so the one-coin model becomes "every vote right with one probability"."""
    n_correct = np.asarray(n_correct, dtype=np.int64)
    n_votes = np.asarray(n_votes, dtype=np.int64)
    names = np.asarray(items)
    rows, agree = _votes_as_answers(n_correct=n_correct, n_votes=n_votes)
    result = one_coin_uncertainty(items=rows, workers=np.full(len(rows), POOLED), agree=agree, seed=seed,
                                  draws=draws, level=level, model=MODEL_POOLED, digits=digits)
    per_item = result.per_item.assign(item=names[result.per_item["item"].to_numpy(dtype=np.int64)])
    return ItemUncertainty(per_item=per_item, model=MODEL_POOLED, facts=result.facts)


def pooled_parameters(*, n_correct: np.ndarray, n_votes: np.ndarray) -> dict[str, float] | None:
    """The pooled one-coin model's two parameters by EM (crowd-kit, as `pooled_uncertainty` fits them, without the
    posterior draws): `vote_accuracy` (every vote right with this probability, under the same accuracy prior as the
    facts report) and `share_gold_right`. What the posterior stopping rule (tasks/stel/posterior.py) reads; None
    without answers. Answers stopped early by a rule that looks only at the answers themselves (m of k, the
    posterior rule) leave the likelihood, and so the EM, as it is: the stopping is ignorable."""
    n_correct = np.asarray(n_correct, dtype=np.int64)
    n_votes = np.asarray(n_votes, dtype=np.int64)
    keep = n_votes > 0
    n_correct, n_votes = n_correct[keep], n_votes[keep]
    if not len(n_votes):
        return None
    rows, agree = _votes_as_answers(n_correct=n_correct, n_votes=n_votes)
    right = _one_coin_em(pd.DataFrame({"task": rows, "worker": 0, "label": agree.astype(int)}))
    right = right.reindex(range(len(n_votes))).to_numpy(dtype=float)
    r = right[rows]
    correct = float(np.where(agree, r, 1.0 - r).sum())
    prior_a, prior_b = accuracy_prior(np.asarray([correct]), np.asarray([float(len(rows))]))
    return {"vote_accuracy": round((correct + prior_a) / (len(rows) + prior_a + prior_b), DIGITS),
            "share_gold_right": round(float(right.mean()), DIGITS), "items": int(len(n_votes)),
            "answers": int(len(rows))}


def likert_uncertainty(*, items: np.ndarray, values: np.ndarray, seed: int = 0, resamples: int = 1000,
                       level: float = 0.95) -> pd.DataFrame:
    """Per item: how many gave each rating, the mean and a percentile bootstrap interval of the mean (the ratings
    resampled with replacement; an item rated once has no interval)."""
    frame = pd.DataFrame({"item": items, "value": np.asarray(values, dtype=float)}).sort_values(["item", "value"],
                                                                                               kind="stable")
    rng = np.random.default_rng(seed)
    tail = (1.0 - level) / 2
    rows = []
    for item, group in frame.groupby("item", sort=True):
        ratings = group["value"].to_numpy()
        low = high = None
        if len(ratings) > 1:
            means = rng.choice(ratings, size=(resamples, len(ratings)), replace=True).mean(axis=1)
            low, high = (round(float(x), DIGITS) for x in np.quantile(means, [tail, 1.0 - tail]))
        distribution = {_rating_key(v): int(n) for v, n in zip(*np.unique(ratings, return_counts=True), strict=True)}
        rows.append({"item": item, "n": len(ratings), "mean": round(float(ratings.mean()), DIGITS),
                     "mean_low": low, "mean_high": high, "distribution": distribution})
    return pd.DataFrame(rows, columns=["item", "n", "mean", "mean_low", "mean_high", "distribution"])


def _rating_key(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def expected_wrong(p_correct: pd.Series | np.ndarray) -> float:
    """Expected number of wrong gold labels: the sum of 1 − p over the items."""
    values = np.asarray(pd.Series(p_correct).dropna(), dtype=float)
    return round(float((1.0 - values).sum()), 2)


# --- a study's items, and STEL's published counts --------------------------------------------------------------------

def study_uncertainty(*, study: Any, seed: int = 0) -> ItemUncertainty | None:
    """The ordering items of a study with a gold answer, from the first k valid responses of each: the one-coin
    model over its annotators, or the pooled one (and a warning) where the annotator ids are positions. None when
    no item has both a gold answer and a response."""
    # selectors import Django models; the models above need no database, and benchmarks/item_uncertainty.py
    # imports this module without setting Django up
    from scoring.agreement import selectors
    from scoring.agreement.stats.votes import first_k_responses

    items = selectors.items_frame(study_id=study.pk)
    gold = items.set_index("item_id")["correct_answer"]
    first_k = first_k_responses(responses=selectors.responses_frame(study_id=study.pk), k=study.annotators_per_item)
    answer_gold = first_k["item_id"].map(gold).fillna("").astype(str)
    rows = first_k[answer_gold != ""]
    if rows.empty:
        return None
    agree = rows["answer"].astype(str).to_numpy() == answer_gold[answer_gold != ""].to_numpy()
    people = selectors.participants_frame(study_id=study.pk)
    imported = people[people["platform"] == "imported"]
    names = dict(zip(imported["participant_id"], imported["external_id"].astype(str), strict=True))
    positional, warning = positional_ids(items=rows["item_id"].to_numpy(), workers=rows["participant_id"].to_numpy(),
                                         names=names)
    if positional:
        counts = pd.DataFrame({"item": rows["item_id"].to_numpy(), "agree": agree}).groupby("item")["agree"]
        result = pooled_uncertainty(items=counts.sum().index.to_numpy(), n_correct=counts.sum().to_numpy(),
                                    n_votes=counts.size().to_numpy(), seed=seed)
    else:
        result = one_coin_uncertainty(items=rows["item_id"].to_numpy(), workers=rows["participant_id"].to_numpy(),
                                      agree=agree, seed=seed, difficulty=difficulty_of(study))
    instance = items.set_index("item_id")["instance_id"]
    result.per_item["instance_id"] = result.per_item["item"].map(instance).to_numpy()
    result.facts.update({"study": study.slug, "model_choice": model_choice(study=study, result=result),
                         **({"warning": warning} if warning else {})})
    return result


# A study's `uncertainty_model` setting (annotation.services.study_settings) → `one_coin_uncertainty(difficulty=…)`.
STUDY_MODEL_DIFFICULTY = {"auto": "auto", "one_coin": "never", "item_difficulty": "always"}


def difficulty_of(study: Any) -> str:
    return STUDY_MODEL_DIFFICULTY[getattr(study, "uncertainty_model", "") or "auto"]


def model_choice(*, study: Any, result: ItemUncertainty) -> dict[str, Any]:
    """Which model gave a study's p_correct and why: the researcher's setting, auto's overdispersion test, or the
    annotator ids being positions (count-only data: the pooled model whatever the setting)."""
    setting = getattr(study, "uncertainty_model", "") or "auto"
    choice: dict[str, Any] = {"setting": setting, "model": result.model}
    test = result.facts.get("overdispersion")
    if result.model == MODEL_POOLED:
        choice["reason"] = ("the annotator ids are positions (count-only data), so the pooled one-coin model is used "
                            f"whatever the setting ({setting})")
    elif setting != "auto":
        choice["reason"] = f"the study's setting uncertainty_model = {setting}"
    elif test is not None:
        verdict = "above" if test["overdispersed"] else "not above"
        choice["reason"] = (f"auto: the overdispersion statistic {test['lr_statistic']} is {verdict} the threshold "
                            f"{round(item_difficulty.LR_THRESHOLD, 1)} (χ², p = 0.001)")
        choice["overdispersion"] = test
    else:
        choice["reason"] = "auto: too few items for the overdispersion test, so the one-coin model"
    return choice


HISTOGRAM_BINS = 20


def uncertainty_summary(*, study: Any, seed: int = 0) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """What an agreement run stores (and its dashboard draws): the model's facts, the histogram of p_correct in
    bands of 0.05, the expected number of wrong gold labels; and the per-item figures (None where no item has a
    gold answer and a response)."""
    result = study_uncertainty(study=study, seed=seed)
    if result is None:
        return {"available": False, "reason": "no item has both a gold answer and a response"}, None
    values = result.per_item["p_correct"].to_numpy(dtype=float)
    counts, _ = np.histogram(values, bins=HISTOGRAM_BINS, range=(0.0, 1.0))
    summary = {"available": True, **result.facts, "expected_wrong_gold_labels": expected_wrong(values),
               "histogram": {"edges": [round(i / HISTOGRAM_BINS, 2) for i in range(HISTOGRAM_BINS + 1)],
                             "counts": [int(n) for n in counts]}}
    return summary, result.per_item


def likert_summary(*, study: Any, question: str, seed: int = 0) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """A Likert study's items: each one's rating distribution and a 95% bootstrap interval of its mean rating, from
    its first k valid ratings of `question`; what the agreement run stores of them."""
    # selectors import Django models; benchmarks/item_uncertainty.py imports this module without setting Django up
    from scoring.agreement import selectors
    from scoring.agreement.stats.votes import first_k_responses

    responses = selectors.responses_frame(study_id=study.pk, question=question or None)
    first_k = first_k_responses(responses=responses, k=study.annotators_per_item)
    first_k = first_k[first_k["value"].notna()]
    if first_k.empty:
        return {"available": False, "reason": "no numeric ratings"}, None
    frame = likert_uncertainty(items=first_k["item_id"].to_numpy(), values=first_k["value"].to_numpy(), seed=seed)
    widths = (frame["mean_high"] - frame["mean_low"]).dropna()
    summary = {"available": True, "model": MODEL_LIKERT, "items": len(frame), "level": 0.95, "seed": seed,
               "mean_interval_width_median": round(float(widths.median()), DIGITS) if len(widths) else None}
    return summary, frame
