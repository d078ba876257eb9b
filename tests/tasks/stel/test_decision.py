"""The rules that define the benchmark (tasks/stel/), each against STEL's own published files.

- the TSV format: STEL's two published files are read by the one reader and written back by the one writer byte for
  byte;
- STEL's decision rule with its tie handling: on the same similarities it gives STEL's published predictions of
  three of STEL's methods, ties (0) included;
- the m-of-k rule: on the vote counts of STEL's published annotation log (benchmarks/data/stel_published_votes.json)
  it validates the 822 formal and 815 simple instances STEL reported, and its "borderline" are STEL's 3-vote ones.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ApplicationError
from tasks.stel import tsv
from tasks.stel.decision import S1_S2, S2_S1, UNDECIDED, predictions_decide
from tasks.stel.majority import (
    m_of_k_borderline,
    m_of_k_final,
    m_of_k_out_of_reach,
    m_of_k_validated,
    min_correct_default,
    stel_surplus_correct,
)
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[3]
STEL = SHARED_DATA / "stel"
PUBLISHED = {"contraction": STEL / "quad_questions_char_contraction.tsv",
             "nbr_substitution": STEL / "quad_questions_char_substitution.tsv"}


def read(path: Path, seen: dict[str, str] | None = None) -> list[tsv.StelRecord]:
    return tsv.stel_tsv_parse(path.read_text("utf-8"), where=lambda line: f"{path.name}:{line}", empty=path.name,
                              seen=seen)


# --- the TSV format -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("component", sorted(PUBLISHED))
def test_published_files_are_read_and_written_back_byte_for_byte(component: str, tmp_path: Path) -> None:
    path = PUBLISHED[component]
    records = read(path)
    assert len(records) == 100 and {r.style_type for r in records} == {component}
    assert {r.correct for r in records} == {1, 2} and all(r.anchor_2 for r in records)  # quadruples, both orders
    assert all(r.votes is None for r in records)  # STEL did not crowd-annotate these characteristics
    out = tmp_path / "written.tsv"
    tsv.stel_tsv_write({
        tsv.ANCHOR_1: [r.anchor_1 for r in records], tsv.ANCHOR_2: [r.anchor_2 for r in records],
        tsv.ALTERNATIVE_1: [r.alternative_1 for r in records], tsv.ALTERNATIVE_2: [r.alternative_2 for r in records],
        tsv.CORRECT: [r.correct for r in records], tsv.ID: [r.id for r in records],
        tsv.VOTES: ["" for _ in records], tsv.STYLE_TYPE: [r.style_type for r in records],
    }, out)
    assert out.read_bytes() == path.read_bytes()
    assert path.read_text("utf-8").split("\n", 1)[0].split("\t") == tsv.HEADER


def test_ids_are_distinct_across_a_set_and_bad_rows_name_their_line(tmp_path: Path) -> None:
    seen: dict[str, str] = {}
    both = read(PUBLISHED["contraction"], seen) + read(PUBLISHED["nbr_substitution"], seen)
    assert len({r.id for r in both}) == 200
    with pytest.raises(ApplicationError, match=r"quad_questions_char_contraction\.tsv:2: duplicate ID 'QQ_ction-0"):
        read(PUBLISHED["contraction"], seen)
    lines = PUBLISHED["contraction"].read_text("utf-8").split("\n")
    cells = lines[3].split("\t")
    cells[5] = "3"
    bad = tmp_path / "bad.tsv"
    bad.write_text("\n".join([*lines[:3], "\t".join(cells), *lines[4:]]), encoding="utf-8")
    with pytest.raises(ApplicationError, match=r"bad\.tsv:4: 'Correct Alternative' must be 1 or 2, not '3'"):
        read(bad)
    (tmp_path / "triples.tsv").write_text(lines[0].replace("\tAnchor 2", "") + "\n", encoding="utf-8")
    assert read(tmp_path / "triples.tsv") == []  # Anchor 2 is optional for scoring …
    with pytest.raises(ApplicationError, match=r"missing column\(s\) 'Anchor 2'") as error:
        tsv.stel_tsv_parse((tmp_path / "triples.tsv").read_text("utf-8"), where=str, empty="x",
                           required=tuple(tsv.COLUMNS))  # … and required for an import
    assert error.value.code == "missing_columns"


# --- STEL's decision rule -------------------------------------------------------------------------------------------


def published_predictions() -> dict[str, dict[str, str]]:
    with (STEL / "published_predictions_characteristics.tsv").open(encoding="utf-8", newline="") as handle:
        return {row["ID"]: row for row in csv.DictReader(handle, delimiter="\t")}


@pytest.mark.parametrize(("method", "column"), [("levenshtein", "LevenshteinSimilarity"),
                                                 ("uppercase", "UppercaseSimilarity"),
                                                 ("word_length", "WordLengthSimilarity")])
def test_decision_rule_gives_stels_published_predictions_ties_included(method: str, column: str) -> None:
    from scoring.model_scoring.methods import method_create

    records = read(PUBLISHED["contraction"]) + read(PUBLISHED["nbr_substitution"])
    similarity = method_create(method).similarity
    a1, a2 = [r.anchor_1 for r in records], [r.anchor_2 for r in records]
    s1, s2 = [r.alternative_1 for r in records], [r.alternative_2 for r in records]
    predictions = predictions_decide(similarity(a1, s1), similarity(a1, s2), similarity(a2, s2), similarity(a2, s1),
                                     np.ones(len(records), dtype=bool))
    published = published_predictions()
    expected = np.array([int(published[r.id][column]) for r in records])
    assert predictions.tolist() == expected.tolist()
    if method == "levenshtein":  # STEL's Levenshtein ties on 85 of the 200: the tie rule is exercised
        assert int((expected == UNDECIDED).sum()) == 85
    assert set(predictions.tolist()) <= {UNDECIDED, S1_S2, S2_S1}


def test_triples_take_the_alternative_closer_to_anchor_1_and_tie_within_the_tolerance() -> None:
    nan = np.full(3, np.nan)
    s11, s12 = np.array([0.9, 0.2, 0.5]), np.array([0.1, 0.8, 0.5 + 1e-15])
    assert predictions_decide(s11, s12, nan, nan, np.zeros(3, dtype=bool)).tolist() == [S1_S2, S2_S1, UNDECIDED]


# --- the m-of-k rule ------------------------------------------------------------------------------------------------


def test_m_of_k_on_stels_published_votes() -> None:
    """STEL's log: formal 822 of 918 validated (3+ of 5), 143 borderline-correct; simple 815 of 1,195, 328."""
    data = json.loads((ROOT / "benchmarks" / "data" / "stel_published_votes.json").read_text("utf-8"))
    k, m = 5, min_correct_default(5)
    assert m == 3
    figures = {}
    for component, histogram in data["components"].items():
        votes = np.repeat(np.array([int(v) for v in histogram]), [histogram[v] for v in histogram])
        figures[component] = (len(votes), int(m_of_k_validated(votes, m).sum()),
                              int(m_of_k_borderline(votes, m).sum()))
        assert (m_of_k_out_of_reach(k - votes, k, m) == ~m_of_k_validated(votes, m)).all()  # k answers: decided
    assert figures == {"formality": (918, 822, 143), "simplicity": (1195, 815, 328)}


@given(k=st.integers(1, 9), data=st.data())
def test_a_final_decision_never_changes(k: int, data: st.DataObject) -> None:
    """Adaptive collection is safe: once final, every completion of the remaining answers gives the same decision."""
    m = data.draw(st.integers(1, k))
    answered = data.draw(st.integers(0, k))
    correct = data.draw(st.integers(0, answered))
    outcomes = {bool(m_of_k_validated(correct + extra, m)) for extra in range(k - answered + 1)}
    assert bool(m_of_k_final(correct, answered - correct, k, m)) == (len(outcomes) == 1)


@given(k=st.integers(1, 9), data=st.data())
def test_stels_surplus_rule_removes_correct_votes_first(k: int, data: st.DataObject) -> None:
    incorrect = data.draw(st.integers(0, 15))
    correct = data.draw(st.integers(max(0, k + 1 - incorrect), 15))  # more than k valid answers
    kept = int(stel_surplus_correct(np.array([incorrect]), k)[0])
    assert kept == k - min(k, incorrect) and 0 <= kept <= min(correct, k)
