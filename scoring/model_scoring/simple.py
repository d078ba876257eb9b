"""STEL's simple (non-neural) style-similarity methods, vectorized over the distinct sentences of a run.

The methods named as STEL's follow STEL's definitions exactly (`legacy_sim_classes.py`, `similarity.py`):
char3gram lower-cases as scikit-learn's CountVectorizer does by default, punctuation counts STEL's 12 marks, and
word_length splits on single spaces. Variants that differ from STEL carry other names (`char3gram_cased`,
`punctuation_extended`, `word_length_ws`).

Each method turns every distinct sentence into a feature once (a sparse count vector or one number), then
computes all pair similarities with numpy/scipy in one go. Conventions where a formula is undefined:
two all-zero count vectors (e.g. two sentences without punctuation) are equally styled (1.0); one all-zero and
one non-zero vector share nothing (0.0).
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from core.errors import ApplicationError
from scoring.error_codes import POS_UNAVAILABLE as POS_UNAVAILABLE_CODE

from .base import Progress, SimilarityMethod, _no_progress

if TYPE_CHECKING:
    from scipy import sparse

# The 12 marks STEL's punctuation method counts (ModelBasedSentenceFeatures.punctuation_freq): ' : , _ ! ? ; . " ( ) -
PUNCTUATION_MARKS: tuple[str, ...] = ("'", ":", ",", "_", "!", "?", ";", ".", '"', "(", ")", "-")
# The list of STEL's paper (§5), which adds the typographic quotes ‘ ’: the `punctuation_extended` method.
PUNCTUATION_MARKS_EXTENDED: tuple[str, ...] = (*PUNCTUATION_MARKS, "\u2018", "\u2019")


def distinct_index(a: Sequence[str], b: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct sentences of both lists (first-seen order) and, for each pair, the rows of its two sides."""
    if len(a) != len(b):
        raise ApplicationError(f"similarity needs two lists of the same length, got {len(a)} and {len(b)}")
    position: dict[str, int] = {}
    for sentence in (*a, *b):
        position.setdefault(sentence, len(position))
    ia = np.fromiter((position[s] for s in a), dtype=np.int64, count=len(a))
    ib = np.fromiter((position[s] for s in b), dtype=np.int64, count=len(b))
    return list(position), ia, ib


def is_sparse(matrix: object) -> bool:
    """scipy's issparse, without importing scipy: a sparse matrix can only exist once scipy.sparse is loaded."""
    scipy_sparse = sys.modules.get("scipy.sparse")
    return scipy_sparse is not None and bool(scipy_sparse.issparse(matrix))


def rowwise_cosine(matrix: sparse.csr_matrix | np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Cosine of rows ia[k] and ib[k] for every k; zero rows follow the module's conventions."""
    if is_sparse(matrix):
        # heavy: scipy and scikit-learn load in a second, only where a run has sparse counts
        from scipy import sparse
        from sklearn.preprocessing import normalize

        matrix = sparse.csr_matrix(matrix, dtype=np.float64)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        unit = normalize(matrix, norm="l2", axis=1)
        cos = np.asarray(unit[ia].multiply(unit[ib]).sum(axis=1)).ravel()
    else:
        matrix = np.asarray(matrix, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        safe = np.where(norms > 0, norms, 1.0)
        unit = matrix / safe[:, None]
        cos = np.einsum("ij,ij->i", unit[ia], unit[ib])
    zero_a, zero_b = norms[ia] == 0, norms[ib] == 0
    cos = np.where(zero_a & zero_b, 1.0, np.where(zero_a | zero_b, 0.0, cos))
    return np.clip(cos, -1.0, 1.0)


_RUNS_OF_WHITESPACE = re.compile(r"\s\s+")


def char_ngram_counts(sentences: Sequence[str], n: int = 3, *, lowercase: bool = False) -> sparse.csr_matrix:
    """Character n-gram counts, one row per sentence, computed with numpy over all sentences at once.

    Each character becomes its code point (21 bits), so an n-gram (n ≤ 3) packs into one int64 and counting is array
    work instead of a Python dict per sentence. Runs of whitespace count as one space (as in sklearn's char
    analyzer); `lowercase` lower-cases first (sklearn's default, `str.lower`).
    """
    if not 1 <= n <= 3:
        raise ValueError("char_ngram_counts packs an n-gram into 63 bits: n must be 1, 2 or 3")
    # heavy: pandas and scipy load in a second, only where n-grams are counted (a method's start-up imports them)
    import pandas as pd
    from scipy import sparse

    texts = [_RUNS_OF_WHITESPACE.sub(" ", sentence.lower() if lowercase else sentence) for sentence in sentences]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    per_sentence = np.maximum(lengths - (n - 1), 0)
    total = int(per_sentence.sum())
    if total == 0:
        return sparse.csr_matrix((len(texts), 1))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    first_gram = np.concatenate(([0], np.cumsum(per_sentence)[:-1]))
    rows = np.repeat(np.arange(len(texts)), per_sentence)
    positions = starts[rows] + (np.arange(total) - first_gram[rows])
    grams = np.zeros(total, dtype=np.int64)
    for offset in range(n):
        grams = (grams << 21) | codes[positions + offset]
    # Hash-based factorization (pandas) is ~10x faster than np.unique's sort for the n-gram vocabulary.
    columns, vocabulary = pd.factorize(grams)
    # COO → CSR sums the duplicate (row, column) entries: the counts.
    return sparse.csr_matrix((np.ones(total), (rows, columns)), shape=(len(texts), len(vocabulary)))


def punctuation_counts(sentences: Sequence[str], marks: Sequence[str] = PUNCTUATION_MARKS) -> np.ndarray:
    """Counts of the punctuation marks, one row per sentence (str.count runs in C). STEL divides the counts by
    the sentence's length; a cosine does not change when a vector is scaled, so the counts give its similarity."""
    return np.array([[sentence.count(mark) for mark in marks] for sentence in sentences],
                    dtype=np.float64).reshape(len(sentences), len(marks))


class _CountCosine(SimilarityMethod):
    """Cosine of count vectors computed once per distinct sentence of the run."""

    sparse_counts = False  # the counts are a scipy sparse matrix (char_ngram_counts)

    def counts(self, sentences: list[str]) -> sparse.csr_matrix | np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        sentences, ia, ib = distinct_index(a, b)
        if not sentences:
            return np.zeros(0)
        if self.sparse_counts:
            with self.starting():
                # heavy, one-time start-up (timed apart): the first imports of pandas and scipy (char_ngram_counts)
                # and scikit-learn (rowwise_cosine)
                import pandas  # noqa: F401
                import scipy.sparse  # noqa: F401
                import sklearn.preprocessing  # noqa: F401
        counts = self.counts(sentences)
        result = rowwise_cosine(counts, ia, ib)
        progress(len(a), len(a))
        return result


class Char3gramSimilarity(_CountCosine):
    """STEL's char3gram: cosine of character 3-gram counts of the lower-cased text (scikit-learn's
    CountVectorizer(analyzer="char", ngram_range=(3, 3)) with its default lowercase=True)."""

    name = "char3gram"
    sparse_counts = True

    def counts(self, sentences: list[str]) -> sparse.csr_matrix:
        return char_ngram_counts(sentences, 3, lowercase=True)


class Char3gramCasedSimilarity(_CountCosine):
    """Cosine of character 3-gram counts with case kept (case is style); not STEL's definition."""

    name = "char3gram_cased"
    sparse_counts = True

    def counts(self, sentences: list[str]) -> sparse.csr_matrix:
        return char_ngram_counts(sentences, 3)


class PunctuationSimilarity(_CountCosine):
    """STEL's punctuation: cosine of the frequency vectors of its 12 marks."""

    name = "punctuation"

    def counts(self, sentences: list[str]) -> np.ndarray:
        return punctuation_counts(sentences)


class PunctuationExtendedSimilarity(_CountCosine):
    """Cosine over the 14 marks of STEL's paper (the 12 of its code and the quotes ‘ ’)."""

    name = "punctuation_extended"

    def counts(self, sentences: list[str]) -> np.ndarray:
        return punctuation_counts(sentences, PUNCTUATION_MARKS_EXTENDED)


def average_word_length(sentence: str) -> float:
    """STEL's average word length: the text split on single spaces (a double space makes an empty word)."""
    words = sentence.split(" ")
    return sum(len(word) for word in words) / len(words)


def average_word_length_ws(sentence: str) -> float:
    """Mean length of the words between runs of any whitespace (0 for a sentence without words)."""
    words = sentence.split()
    return sum(len(word) for word in words) / len(words) if words else 0.0


def uppercase_share(sentence: str) -> float:
    """Share of upper-case characters among all characters (0 for the empty sentence)."""
    return sum(map(str.isupper, sentence)) / len(sentence) if sentence else 0.0


class _ScalarFeature(SimilarityMethod):
    """A method comparing one number per sentence, computed once per distinct sentence."""

    feature: Callable[[str], float]

    def combine(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        sentences, ia, ib = distinct_index(a, b)
        feature = type(self).feature
        values = np.fromiter((feature(s) for s in sentences), dtype=np.float64, count=len(sentences))
        result = self.combine(values[ia], values[ib])
        progress(len(a), len(a))
        return result


class WordLengthSimilarity(_ScalarFeature):
    """1 − |a − b| / max(a, b) with a, b the average word lengths (1 when both are 0)."""

    name = "word_length"
    feature = staticmethod(average_word_length)

    def combine(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        largest = np.maximum(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(largest > 0, 1.0 - np.abs(x - y) / np.where(largest > 0, largest, 1.0), 1.0)


class WordLengthWhitespaceSimilarity(WordLengthSimilarity):
    """word_length with words split on any whitespace run; not STEL's definition."""

    name = "word_length_ws"
    feature = staticmethod(average_word_length_ws)


class UppercaseSimilarity(_ScalarFeature):
    """1 − |a − b| with a, b the shares of upper-case characters."""

    name = "uppercase"
    feature = staticmethod(uppercase_share)

    def combine(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 1.0 - np.abs(x - y)


class LevenshteinSimilarity(SimilarityMethod):
    """Normalized edit similarity 1 − distance / max(len) from rapidfuzz, all pairs in one C++ call."""

    name = "levenshtein"
    workers = 1  # the development machine has 2 shared cores; -1 would use all of them

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        if len(a) != len(b):
            raise ApplicationError(f"similarity needs two lists of the same length, got {len(a)} and {len(b)}")
        if not a:
            return np.zeros(0)
        result = process.cpdist(
            list(a), list(b), scorer=Levenshtein.normalized_similarity, dtype=np.float64, workers=self.workers
        )
        progress(len(a), len(a))
        return np.asarray(result, dtype=np.float64)


POS_UNAVAILABLE = (
    "the pos method needs a part-of-speech tagger with its trained data, and none installs from PyPI with its data "
    "(spaCy's English models and NLTK's tagger data are distributed outside PyPI). To use it, put NLTK's "
    "'averaged_perceptron_tagger_eng' data in a directory on NLTK_DATA (e.g. copied from a machine that has it); "
    "StyleCrowd never downloads it at run time"
)


def nltk_pos_tagger() -> Callable[[str], list[str]]:
    """NLTK's averaged perceptron tagger from locally installed NLTK data, or an ApplicationError saying why not."""
    try:
        # heavy: nltk (and its tagger) load only when these features are computed
        from nltk.tag.perceptron import PerceptronTagger
        from nltk.tokenize import TreebankWordTokenizer

        tagger = PerceptronTagger(lang="eng")
    except (ImportError, LookupError, OSError) as exc:
        raise ApplicationError(POS_UNAVAILABLE, code=POS_UNAVAILABLE_CODE) from exc
    tokenizer = TreebankWordTokenizer()  # rule-based: needs no downloaded data, unlike nltk.word_tokenize

    def tag(sentence: str) -> list[str]:
        return [pos for _, pos in tagger.tag(tokenizer.tokenize(sentence))]

    return tag


class PosSimilarity(SimilarityMethod):
    """Cosine of part-of-speech tag frequency vectors. `tagger` maps a sentence to its list of tags."""

    name = "pos"
    languages = ("en",)  # NLTK's averaged perceptron tagger and its Penn Treebank tags are English

    def __init__(self, *, device: str = "cpu", argument: str | None = None,
                 tagger: Callable[[str], list[str]] | None = None) -> None:
        super().__init__(device=device, argument=argument)
        self.tagger = tagger or nltk_pos_tagger()

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        sentences, ia, ib = distinct_index(a, b)
        if not sentences:
            return np.zeros(0)
        tags = [self.tagger(sentence) for sentence in sentences]
        with self.starting():
            # heavy, one-time start-up (timed apart): scikit-learn loads only when this computation runs
            import sklearn.preprocessing  # noqa: F401  (rowwise_cosine's)
            from scipy import sparse
            from sklearn.feature_extraction.text import CountVectorizer

        vectorizer = CountVectorizer(analyzer=lambda tag_list: tag_list, lowercase=False)
        try:
            counts = vectorizer.fit_transform(tags)
        except ValueError:
            counts = sparse.csr_matrix((len(sentences), 1))
        result = rowwise_cosine(counts, ia, ib)
        progress(len(a), len(a))
        return result
