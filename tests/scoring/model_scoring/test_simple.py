"""The simple methods against hand-computed values, the registry, a user's own method, and `pos`."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ApplicationError
from scoring.model_scoring.base import SimilarityMethod
from scoring.model_scoring.methods import method_create, methods_parse


def sims(spec: str, pairs: list[tuple[str, str]]) -> list[float]:
    method = method_create(spec, device="cpu")
    return method.similarity([a for a, _ in pairs], [b for _, b in pairs]).tolist()


def test_char3gram_cosine_of_character_trigram_counts():
    values = sims("char3gram", [
        ("abcd", "bcde"),  # {abc, bcd} · {bcd, cde} = 1, norms √2·√2 → 1/2
        ("aaaa", "aaa"),   # {aaa: 2} and {aaa: 1} point the same way → 1
        ("Abc", "abc"),    # STEL lower-cases (scikit-learn's default) → the same trigram → 1
        ("abab", "abab"),  # identical → 1
        ("ab", "ab"),      # both without any trigram → alike (1)
        ("ab", "abc"),     # one empty vector → 0
        ("abcab", "abc"),  # {abc:1, bca:1, cab:1} · {abc:1} = 1, norms √3·1 → 1/√3
    ])
    assert values == pytest.approx([0.5, 1.0, 1.0, 1.0, 1.0, 0.0, 1 / math.sqrt(3)])
    # the variant that keeps case: no shared trigram → 0
    assert sims("char3gram_cased", [("Abc", "abc"), ("abcd", "bcde")]) == pytest.approx([0.0, 0.5])


def test_punctuation_counts_stels_twelve_marks_and_the_extended_variant_fourteen():
    pairs = [("\u2018x\u2019 y.", "x y."), ("a - b", "a _ b")]
    assert sims("punctuation", pairs) == pytest.approx([1.0, 0.0])  # STEL's code does not count ‘ ’
    assert sims("punctuation_extended", pairs) == pytest.approx([1 / math.sqrt(3), 0.0])


def test_punctuation_cosine_counts_only_stels_marks():
    values = sims("punctuation", [
        ("Hi, there!", "Hi there!!"),    # (',':1,'!':1) · ('!':2) = 2 / (√2 · 2) = 1/√2
        ("no marks", "none here either"),  # neither has a mark → alike
        ("a.", "b"),                       # one without marks → 0
        ("\u2018x\u2019", "'x'"),          # curly and straight quotes are different marks → 0
        ("(a) - b; c: d_e?", "(f) - g; h: i_j?"),  # same marks, same counts → 1
        ("a & b # c", "d e"),              # & and # are not in STEL's list → both empty → 1
    ])
    assert values == pytest.approx([1 / math.sqrt(2), 1.0, 0.0, 0.0, 1.0, 1.0])


def test_word_length_is_one_minus_relative_difference_of_average_word_lengths():
    values = sims("word_length", [
        ("aa bbbb", "cc"),     # averages 3 and 2 → 1 − 1/3
        ("abc", "xyz"),        # 3 and 3 → 1
        ("a", "abcd"),         # 1 and 4 → 1 − 3/4
        ("", ""),              # no words on either side → 1
        ("", "ab"),            # 0 and 2 → 1 − 2/2 = 0
        ("hello,  world", "hi"),  # STEL splits on " ": "hello," (6), "" (0), "world" (5) → 11/3 vs 2
    ])
    assert values == pytest.approx([1 - 1 / 3, 1.0, 0.25, 1.0, 0.0, 1 - (11 / 3 - 2) / (11 / 3)])
    # the variant splitting on any whitespace: 5.5 vs 2
    assert sims("word_length_ws", [("hello,  world", "hi")]) == pytest.approx([1 - 3.5 / 5.5])


def test_uppercase_is_one_minus_difference_of_uppercase_shares():
    values = sims("uppercase", [
        ("ABcd", "abcd"),   # 0.5 vs 0 → 0.5
        ("AB", "Ab"),       # 1 vs 0.5 → 0.5
        ("Hello", "World"),  # 0.2 vs 0.2 → 1
        ("A b", "aaaa"),    # 1/3 (the space counts as a character) vs 0 → 2/3
    ])
    assert values == pytest.approx([0.5, 0.5, 1.0, 2 / 3])


def test_levenshtein_normalized_similarity():
    values = sims("levenshtein", [
        ("kitten", "sitting"),  # distance 3, longer length 7 → 1 − 3/7
        ("it is", "it's"),      # delete ' i' → ', insert ' → distance 2 (is→'s: substitute i→', delete space) / 5
        ("same", "same"),
        ("abc", "xyz"),
    ])
    assert values == pytest.approx([1 - 3 / 7, 1 - 2 / 5, 1.0, 0.0])


def test_vectorized_methods_agree_with_repeated_sentences_and_order():
    # The same sentence on many pairs is encoded once; results must still line up with the pairs.
    a = ["Hello, world!", "it's fine", "Hello, world!", "ABC def"]
    b = ["it's fine", "Hello, world!", "Hello, world!", "abc DEF"]
    for spec in ("char3gram", "punctuation", "word_length", "uppercase", "levenshtein"):
        method = method_create(spec)
        together = method.similarity(a, b)
        one_by_one = [method.similarity([x], [y])[0] for x, y in zip(a, b, strict=True)]
        assert together == pytest.approx(one_by_one), spec
        assert together[2] == pytest.approx(1.0), spec
        assert together[0] == pytest.approx(together[1]), spec  # all five are symmetric


def test_methods_parse_and_unknown_method():
    assert methods_parse(" char3gram , st:minilm ") == ["char3gram", "st:minilm"]
    with pytest.raises(ApplicationError, match="more than once"):
        methods_parse("char3gram,char3gram")
    with pytest.raises(ApplicationError, match="at least one"):
        methods_parse(" , ")
    with pytest.raises(ApplicationError, match="unknown method 'char4gram'.*char3gram"):
        method_create("char4gram")


def test_model_method_needs_an_existing_local_model_directory(tmp_path):
    with pytest.raises(ApplicationError, match="does not exist"):
        method_create(f"hf:{tmp_path / 'nope'}", device="cpu")
    with pytest.raises(ApplicationError, match="no config.json"):
        method_create(f"st:{tmp_path}", device="cpu")
    with pytest.raises(ApplicationError, match="needs a model path"):
        method_create("nsp:", device="cpu")
    with pytest.raises(ApplicationError, match="auto, cpu or cuda"):
        method_create("hf:minilm", device="tpu")


class VowelShareSimilarity(SimilarityMethod):
    """A user's own method: 1 − |difference of vowel shares|, optionally scaled by the spec's argument."""

    def similarity(self, a: Sequence[str], b: Sequence[str], **kwargs) -> np.ndarray:
        def share(s: str) -> float:
            return sum(ch in "aeiou" for ch in s) / len(s)

        scale = float(self.argument or 1)
        return np.array([1 - scale * abs(share(x) - share(y)) for x, y in zip(a, b, strict=True)])


def test_custom_method_by_dotted_path_with_argument():
    method = method_create(f"{__name__}.VowelShareSimilarity:0.5")
    assert method.name == f"{__name__}.VowelShareSimilarity:0.5"
    # "aa" share 1, "ab" share 0.5 → 1 − 0.5·0.5
    assert method.similarity(["aa"], ["ab"]).tolist() == pytest.approx([0.75])


def test_custom_method_must_be_a_similarity_method():
    with pytest.raises(ApplicationError, match="not a subclass"):
        method_create("collections.OrderedDict")
    with pytest.raises(ApplicationError, match="cannot import"):
        method_create("no_such_package.Method")


def test_pos_without_tagger_data_says_why():
    # No PyPI package ships an English tagger with its data (see docs): the error must say so, not fake tags.
    try:
        import nltk

        nltk.data.find("taggers/averaged_perceptron_tagger_eng/")
    except LookupError:
        with pytest.raises(ApplicationError, match="part-of-speech tagger.*PyPI"):
            method_create("pos")
    else:  # a machine where someone installed the NLTK data by hand: then pos must really tag
        values = sims("pos", [("The cat sat.", "A dog ran."), ("The cat sat.", "Run!")])
        assert values[0] == pytest.approx(1.0) and values[1] < 1.0


def test_pos_cosine_of_tag_frequencies_with_a_given_tagger():
    from scoring.model_scoring.simple import PosSimilarity

    # A fixed tagger stands in for the tag sequences; the cosine over tag counts is what is checked here.
    tags = {"s1": ["DT", "NN", "VBD"], "s2": ["DT", "NN", "NN"], "s3": [], "s4": []}
    method = PosSimilarity(tagger=tags.__getitem__)
    values = method.similarity(["s1", "s1", "s3", "s1"], ["s2", "s1", "s4", "s3"]).tolist()
    # (DT1,NN1,VBD1)·(DT1,NN2) = 3 / (√3·√5)
    assert values == pytest.approx([3 / math.sqrt(15), 1.0, 1.0, 0.0])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=1, max_size=8), st.data())
def test_char3gram_counts_equal_sklearns_char_analyzer(sentences, data):
    """Invariant: the numpy n-gram counting gives the cosine sklearn's CountVectorizer(analyzer="char") gives."""
    from sklearn.feature_extraction.text import CountVectorizer

    from scoring.model_scoring.simple import rowwise_cosine

    other = data.draw(st.permutations(sentences))
    ours = method_create("char3gram").similarity(sentences, other)
    vocabulary_source = [*sentences, *other]
    try:
        counts = CountVectorizer(analyzer="char", ngram_range=(3, 3), lowercase=False).fit_transform(vocabulary_source)
    except ValueError:  # no sentence has three characters: every pair is "alike" by convention
        assert ours.tolist() == [1.0] * len(sentences)
        return
    index = np.arange(len(sentences))
    expected = rowwise_cosine(counts, index, index + len(sentences))
    assert ours == pytest.approx(expected, abs=1e-12)


@pytest.mark.model
def test_device_auto_picks_what_torch_sees_and_cuda_without_a_gpu_is_an_error():
    import torch

    assert method_create("st:minilm", device="auto").device == ("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        assert method_create("hf:minilm", device="cuda").device == "cuda"
    else:
        with pytest.raises(ApplicationError, match="no CUDA device"):
            method_create("hf:minilm", device="cuda")
