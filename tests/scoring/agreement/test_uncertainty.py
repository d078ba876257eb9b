"""Per-item uncertainty: calibrated on simulated crowds (slow lane), the pooled model on STEL's published counts,
annotator ids that are positions, Likert distributions."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scoring.agreement.simulated_crowds import CrowdSpec, coverage, crowd_simulate, expected_calibration_error
from scoring.agreement.uncertainty import (
    LEVEL,
    MODEL_ANNOTATORS,
    MODEL_DIFFICULTY,
    MODEL_POOLED,
    expected_wrong,
    likert_uncertainty,
    one_coin_uncertainty,
    pooled_uncertainty,
)

ROOT = Path(__file__).resolve().parents[3]
STEL_VOTES = ROOT / "benchmarks" / "data" / "stel_published_votes.json"


@pytest.mark.slow  # about ten seconds: out of `make test-fast`
def test_calibration_and_coverage_on_simulated_crowds() -> None:
    """Heterogeneous annotators in batches of 14, 10% spammers, 10% wrong gold labels, item difficulty: the
    calibration error stays within 0.03 on each crowd, and the intervals cover the oracle posterior within 3 points
    of 90% over the crowds (fixed seeds; benchmarks/item_uncertainty.py runs more of them)."""
    _assert_calibrated(replace(CrowdSpec(), n_items=1500), difficulty="auto", model=MODEL_ANNOTATORS)


def _assert_calibrated(spec: CrowdSpec, *, difficulty: str, model: str) -> None:
    """Three crowds (seeds 0-2) fitted with `difficulty`: the fitted model is `model`, each crowd's calibration error
    is at most 0.03, its expected wrong gold labels within 25% of the true number, and the intervals cover the oracle
    of the fitted model (the one-coin oracle, or the posterior of the model that made the answers) within 3 points
    of 90% over the crowds."""
    coverages = []
    for seed in (0, 1, 2):
        crowd = crowd_simulate(spec, seed=seed)
        result = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, seed=seed,
                                      digits=None, difficulty=difficulty)
        frame = result.per_item
        assert len(frame) == spec.n_items and result.model == model and "overdispersion" in result.facts
        ece = expected_calibration_error(frame["p_correct"].to_numpy(), crowd.gold_right)
        assert ece <= 0.03, (seed, ece)
        oracle = crowd.oracle_difficulty if model == MODEL_DIFFICULTY else crowd.oracle
        coverages.append(coverage(frame["p_correct_low"].to_numpy(), frame["p_correct_high"].to_numpy(),
                                  oracle, tolerance=0.0))
        # the expected number of wrong gold labels is near the true number
        wrong = int((~crowd.gold_right).sum())
        assert abs(expected_wrong(frame["p_correct"]) - wrong) < 0.25 * wrong
    assert abs(float(np.mean(coverages)) - LEVEL) <= 0.03, coverages


@pytest.mark.slow  # about ten seconds: out of `make test-fast`
def test_calibration_and_coverage_on_a_hard_items_crowd() -> None:
    """Very hard items (difficulty Beta(1, 2)): the one-coin model expects too many wrong gold labels; the model
    with item difficulty classes (`difficulty="always"`) stays within 0.03 of calibration on each crowd, and its
    intervals cover the posterior of the model that made the answers within 3 points of 90% (fixed seeds). The
    overdispersion test cannot tell such a crowd from an ordinary one at k = 5, so "auto" keeps the one-coin model
    there, and says why in its facts."""
    _assert_calibrated(replace(CrowdSpec(), n_items=1500, difficulty_b=2.0), difficulty="always",
                       model=MODEL_DIFFICULTY)


def test_overdispersion_test_keeps_the_one_coin_model_on_an_ordinary_crowd() -> None:
    crowd = crowd_simulate(replace(CrowdSpec(), n_items=300), seed=3)
    result = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, draws=20)
    assert result.model == MODEL_ANNOTATORS and result.facts["overdispersion"]["overdispersed"] is False
    never = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, draws=20,
                                 difficulty="never")
    assert never.per_item.equals(result.per_item) and "overdispersion" not in never.facts
    with pytest.raises(ValueError, match="difficulty must be one of"):
        one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, difficulty="sometimes")


def test_calibration_measures_fail_a_miscalibrated_answer() -> None:
    """The measures themselves can fail: an over-confident answer (0 or 1 from the majority) has a large error and
    an interval of zero width misses the oracle."""
    crowd = crowd_simulate(replace(CrowdSpec(), n_items=400), seed=5)
    n_correct, n_votes = crowd.counts()
    majority = (2 * n_correct > n_votes).astype(float)
    assert expected_calibration_error(np.where(majority > 0, 0.999, 0.001), crowd.gold_right) > 0.03
    assert coverage(majority, majority, crowd.oracle, tolerance=0.0) < 0.5


def _stel_fit(component: str) -> tuple[np.ndarray, object]:
    counts = json.loads(STEL_VOTES.read_text())["components"][component]
    votes = np.repeat(np.arange(6), [counts[str(v)] for v in range(6)])
    result = pooled_uncertainty(items=np.arange(len(votes)), n_correct=votes, n_votes=np.full(len(votes), 5))
    return votes, result


@pytest.mark.parametrize("component,share,vote_accuracy,three_of_five,wrong_validated", [
    ("formality", 0.955, 0.840, 0.991, 1.4),
    ("simplicity", 0.763, 0.713, 0.888, 43.2),
])
def test_pooled_model_on_stels_published_counts(component, share, vote_accuracy, three_of_five,
                                                wrong_validated) -> None:
    """STEL publishes vote counts out of 5 and no annotator: the pooled one-coin model, said so in the output."""
    votes, result = _stel_fit(component)
    assert result.model == MODEL_POOLED and "count-only" in result.model
    assert result.facts["annotators"] == 1 and result.facts["items"] == len(votes)
    assert result.facts["share_gold_right"] == pytest.approx(share, abs=0.002)
    assert result.facts["vote_accuracy"] == pytest.approx(vote_accuracy, abs=0.002)
    frame = result.per_item.assign(votes=votes)
    per_count = frame.groupby("votes")["p_correct"].agg(["min", "max"])
    assert (per_count["min"] == per_count["max"]).all()  # the same count, the same probability
    assert per_count["min"].is_monotonic_increasing
    three = frame[frame["votes"] == 3].iloc[0]
    assert three["p_correct"] == pytest.approx(three_of_five, abs=0.002)
    assert three["p_correct_low"] < three["p_correct"] < three["p_correct_high"]
    validated = frame[frame["votes"] >= 3]
    assert expected_wrong(validated["p_correct"]) == pytest.approx(wrong_validated, abs=0.3)


def test_uncertainty_is_reproducible_for_a_seed() -> None:
    crowd = crowd_simulate(replace(CrowdSpec(), n_items=200), seed=2)
    first = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, seed=0).per_item
    again = one_coin_uncertainty(items=crowd.items, workers=crowd.workers, agree=crowd.agree, seed=0).per_item
    assert first.equals(again)


def test_likert_distribution_and_bootstrap_interval() -> None:
    frame = likert_uncertainty(items=np.array(["a"] * 5 + ["b"] * 3 + ["c"]),
                               values=np.array([1, 2, 2, 5, 5, 4, 4, 4, 3]), seed=0)
    a, b, c = (frame.set_index("item").loc[name] for name in "abc")
    assert a["distribution"] == {"1": 1, "2": 2, "5": 2} and a["mean"] == 3.0
    assert 1.0 <= a["mean_low"] < 3.0 < a["mean_high"] <= 5.0
    assert b["mean_low"] == b["mean_high"] == 4.0  # everyone gave 4
    assert c["n"] == 1 and pd.isna(c["mean_low"])  # one rating: no interval


def test_unanimous_annotators_are_not_taken_as_infallible() -> None:
    """Everyone agrees with every gold answer: the accuracy prior's fit runs off to "always right"; its floor keeps
    the probabilities finite and the intervals open."""
    items = np.repeat(np.arange(20), 3)
    workers = np.tile(np.arange(3), 20)
    frame = one_coin_uncertainty(items=items, workers=workers, agree=np.ones(60, dtype=bool), digits=None).per_item
    assert (frame["p_correct"] > 0.9).all() and (frame["p_correct_low"] < frame["p_correct_high"]).all()


@pytest.mark.django_db
def test_agreement_run_of_a_likert_study_keeps_rating_distributions_and_intervals(tmp_path, settings) -> None:
    import io

    from django.core.management import call_command

    from annotation.models import Study
    from scoring.agreement.runs import agreement_run_compute, agreement_run_start

    settings.MEDIA_ROOT = str(tmp_path)
    path = tmp_path / "ratings.csv"
    path.write_text("item,annotator,value\n" + "".join(f"a,r{i},{v}\n" for i, v in enumerate([1, 2, 2, 5, 5]))
                    + "".join(f"b,r{i},4\n" for i in range(5)))
    call_command("import_annotations", "--study", "lik", "--question", "style", "--scale", "1-5", str(path),
                 stdout=io.StringIO())
    study = Study.objects.get(slug="lik")
    run = agreement_run_compute(run_id=agreement_run_start(study=study, resamples=20, enqueue=False).pk)
    facts = run.result["uncertainty"]
    assert facts["available"] and facts["model"] == "rating distribution, bootstrap interval of the mean"
    items = pd.read_parquet(run.items_path).set_index("external_id")
    assert json.loads(items.loc["a", "rating_distribution"]) == {"1": 1, "2": 2, "5": 2}
    assert items.loc["a", "rating_mean"] == 3.0 and items.loc["a", "rating_mean_low"] < 3.0 < items.loc[
        "a", "rating_mean_high"]
    assert items.loc["b", "rating_mean_low"] == items.loc["b", "rating_mean_high"] == 4.0
