"""STEL's decision rule, the 0.5 rule for undecided instances, seeded tie-breaking, and McNemar's test."""
from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from scoring.model_scoring.evaluation import accuracy_table, mcnemar_compare
from tasks.stel.decision import accuracy_with_undecided, predictions_decide, predictions_force

NAN = float("nan")


def decide(rows: list[tuple[float, float, float, float]], quad: list[bool]) -> list[int]:
    s11, s12, s22, s21 = (np.array(col, dtype=float) for col in zip(*rows, strict=True))
    return predictions_decide(s11, s12, s22, s21, np.array(quad)).tolist()


def test_quadruple_rule_compares_sums_of_squared_distances():
    rows = [
        # sim(A1,S1), sim(A1,S2), sim(A2,S2), sim(A2,S1)
        (0.9, 0.1, 0.8, 0.2),   # 0.01+0.04 < 0.81+0.64 → S1-S2
        (0.1, 0.9, 0.2, 0.8),   # mirrored → S2-S1
        (0.5, 1.0, 1.0, 0.5),   # 0.25+0 = 0+0.25 → tie, undecided
        (0.7, 0.7, 0.3, 0.3),   # identical alternatives → undecided
        # A1 clearly prefers S2 but A2 prefers S2 even more strongly: 0.36+0 < 0.01+1 → S1-S2
        (0.4, 0.9, 1.0, 0.0),
        (-0.5, 0.0, 0.0, -0.5),  # cosine can be negative: 2.25+1 > 1+2.25? equal → undecided
    ]
    assert decide(rows, [True] * 6) == [1, 2, 0, 0, 1, 0]


def test_triple_rule_picks_the_alternative_closer_to_anchor_1_and_ignores_anchor_2():
    rows = [(0.8, 0.3, NAN, NAN), (0.3, 0.8, NAN, NAN), (0.5, 0.5, NAN, NAN), (0.6, 0.5, 0.0, 1.0)]
    assert decide(rows, [False] * 4) == [1, 2, 0, 1]


def test_float_noise_does_not_break_a_tie():
    # 0.1 + 0.2 != 0.3 in floating point: equal in exact arithmetic, so the instance stays undecided.
    rows = [(1 - (0.1 + 0.2), 1 - 0.3, 1.0, 1.0), (0.1 + 0.2, 0.3, NAN, NAN), (0.3 + 1e-9, 0.3, NAN, NAN)]
    assert decide(rows, [True, False, False]) == [0, 0, 1]


def test_mixed_quadruples_and_triples():
    rows = [(0.4, 0.9, 1.0, 0.0), (0.4, 0.9, 1.0, 0.0)]
    assert decide(rows, [True, False]) == [1, 2]


def test_undecided_counts_half_in_accuracy():
    assert accuracy_with_undecided(np.array([1, 2, 0, 0]), np.array([1, 1, 2, 1])) == pytest.approx(0.5)
    assert accuracy_with_undecided(np.array([1, 1, 0]), np.array([1, 1, 1])) == pytest.approx(2.5 / 3)
    assert accuracy_with_undecided(np.array([0, 0]), np.array([1, 2])) == pytest.approx(0.5)
    # The weighted mean of 0.5 and the accuracy on decided instances (STEL): 3 decided, 2 right; 1 undecided.
    preds, gold = np.array([1, 2, 2, 0]), np.array([1, 2, 1, 2])
    assert accuracy_with_undecided(preds, gold) == pytest.approx(0.75 * (2 / 3) + 0.25 * 0.5)


def test_accuracy_table_per_component_with_undecided_share():
    preds = np.array([1, 0, 2, 0, 0, 1])
    gold = np.array([1, 2, 1, 1, 2, 1])
    comps = np.array(["formality", "formality", "formality", "simplicity", "simplicity", "simplicity"], dtype=object)
    table = accuracy_table(preds, gold, comps)
    assert table["overall"]["accuracy"] == pytest.approx((2 + 1.5) / 6)
    assert table["overall"]["undecided_share"] == pytest.approx(0.5)
    assert table["components"]["formality"] == {
        "n": 3, "accuracy": pytest.approx(1.5 / 3), "accuracy_stel": pytest.approx(1.5 / 3), "stel_quirk": False,
        "accuracy_decided": pytest.approx(0.5), "undecided_share": pytest.approx(1 / 3), "undecided": 1,
    }
    assert table["components"]["simplicity"]["accuracy"] == pytest.approx(2 / 3)
    # STEL's code reports 0.5 when ties are at least as many as decisions (2 ties, 1 decision, right)
    assert table["components"]["simplicity"]["accuracy_stel"] == 0.5
    assert table["components"]["simplicity"]["stel_quirk"] is True
    assert table["components"]["simplicity"]["undecided_share"] == pytest.approx(2 / 3)


def test_forced_predictions_replace_only_ties_and_are_reproducible():
    preds = np.array([0] * 200 + [1, 2])
    forced = predictions_force(preds, seed=7, method="char3gram")
    assert forced[-2:].tolist() == [1, 2]
    assert set(forced[:200].tolist()) == {1, 2}  # 200 fair draws land on both sides
    assert np.array_equal(forced, predictions_force(preds, seed=7, method="char3gram"))
    assert not np.array_equal(forced, predictions_force(preds, seed=8, method="char3gram"))
    assert not np.array_equal(forced, predictions_force(preds, seed=7, method="levenshtein"))


def test_mcnemar_matches_statsmodels_on_the_discordant_pairs():
    right_1 = np.array([True] * 30 + [True] * 12 + [False] * 3 + [False] * 5)
    right_2 = np.array([True] * 30 + [False] * 12 + [True] * 3 + [False] * 5)
    result = mcnemar_compare(right_1, right_2)
    assert result["table"] == [[30, 12], [3, 5]]
    assert result["exact"] is True  # 15 discordant pairs
    assert result["pvalue"] == pytest.approx(mcnemar(np.array([[30, 12], [3, 5]]), exact=True).pvalue)
    # exact binomial: 2·P(X ≤ 3 | n=15, p=½) = 2·(1+15+105+455)/2^15
    assert result["pvalue"] == pytest.approx(2 * 576 / 2**15)
    same = mcnemar_compare(right_1, right_1)
    assert same["pvalue"] == pytest.approx(1.0)
