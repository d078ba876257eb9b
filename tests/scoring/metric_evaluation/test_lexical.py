"""bleu, chrf, levenshtein, jaro_winkler on real TurkCorpus sentences, against direct library calls."""
from __future__ import annotations

import pytest
import sacrebleu
from rapidfuzz.distance import JaroWinkler, Levenshtein

from core.errors import ApplicationError
from scoring.metric_evaluation import MetricItem, metrics_resolve
from tests.scoring.metric_fixtures import turk_rows


@pytest.fixture
def turk_items(shared_data) -> list[MetricItem]:
    rows = turk_rows(shared_data, 25)
    # Every other item without a reference: the _ref columns must leave exactly those out.
    return [
        MetricItem(source=r["complex"], rewrite=r["turk"], reference=r["simple"] if n % 2 == 0 else None,
                   target_style="simple", system="turk_0")
        for n, r in enumerate(rows)
    ]


def test_bleu_and_chrf_equal_sacrebleu_sentence_scores(turk_items):
    bleu, chrf = metrics_resolve(["bleu", "chrf"])
    bleu_scores = bleu.score(turk_items, options={})
    chrf_scores = chrf.score(turk_items, options={})
    for n, item in enumerate(turk_items):
        assert bleu_scores["bleu_src"][n] == pytest.approx(sacrebleu.sentence_bleu(item.rewrite, [item.source]).score)
        assert chrf_scores["chrf_src"][n] == pytest.approx(sacrebleu.sentence_chrf(item.rewrite, [item.source]).score)
        if item.reference:
            expected = sacrebleu.sentence_bleu(item.rewrite, [item.reference]).score
            assert bleu_scores["bleu_ref"][n] == pytest.approx(expected)
            assert chrf_scores["chrf_ref"][n] == pytest.approx(
                sacrebleu.sentence_chrf(item.rewrite, [item.reference]).score
            )
        else:
            assert bleu_scores["bleu_ref"][n] is None
            assert chrf_scores["chrf_ref"][n] is None
    # Real simplifications differ from their source: not every score is the identical-sentence 100.
    assert len(set(bleu_scores["bleu_src"])) > 10
    assert all(0 <= v <= 100 + 1e-9 for v in bleu_scores["bleu_src"])  # 100 can come out as 100.00000000000004


def test_edit_similarities_equal_rapidfuzz(turk_items):
    lev, jw = metrics_resolve(["levenshtein", "jaro_winkler"])
    lev_scores = lev.score(turk_items, options={})
    jw_scores = jw.score(turk_items, options={})
    for n, item in enumerate(turk_items):
        assert lev_scores["levenshtein_src"][n] == pytest.approx(
            Levenshtein.normalized_similarity(item.rewrite, item.source), abs=1e-12
        )
        assert jw_scores["jaro_winkler_src"][n] == pytest.approx(
            JaroWinkler.normalized_similarity(item.rewrite, item.source), abs=1e-12
        )
        if item.reference:
            assert lev_scores["levenshtein_ref"][n] == pytest.approx(
                Levenshtein.normalized_similarity(item.rewrite, item.reference), abs=1e-12
            )
        else:
            assert lev_scores["levenshtein_ref"][n] is None


def test_hand_computed_values_on_short_sentences():
    items = [MetricItem(source="kitten", rewrite="sitting"), MetricItem(source="The cat sat.", rewrite="The cat sat.")]
    lev = metrics_resolve(["levenshtein"])[0].score(items, options={})["levenshtein_src"]
    # kitten -> sitting: 3 edits, longer string has 7 characters.
    assert lev[0] == pytest.approx(1 - 3 / 7)
    assert lev[1] == 1.0
    bleu = metrics_resolve(["bleu"])[0].score(items, options={})
    assert bleu["bleu_src"][1] == pytest.approx(100.0)
    assert "bleu_ref" not in bleu  # no item carries a reference


def test_unknown_metric_is_a_clear_error():
    with pytest.raises(ApplicationError) as error:
        metrics_resolve(["bleu", "comet"])
    assert "comet" in error.value.message and "levenshtein" in error.value.message
    with pytest.raises(ApplicationError):
        metrics_resolve([" ", ""])
