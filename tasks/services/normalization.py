"""Text normalization at import: undo the tokenization of corpora such as TurkCorpus (`Sudan .`, `Islam 's`).

A tokenized side next to a naturally typed side leaks the label: a method can tell them apart by their spaces.
STEL detokenized both sides of TurkCorpus before generating (its `adapt_quotation_marks` and
`adapt_punctuation` in `quadruple_generators.py`). That mapping is the reference here; the work is done by
sacremoses' `MosesDetokenizer`, a maintained detokenizer, with the steps STEL has and Moses lacks (Penn
Treebank bracket tokens such as `-lrb-`; `does n't`; a clitic before final punctuation, `Earth 's.`). On the
21,231 texts of the shared TurkCorpus files the result has the same characters as STEL's in every text and the
same spacing in about 98.7 % of them; where the spacing differs, STEL's replacement list leaves a token apart
that Moses joins (`5 %`, `$ 84`, `the' famous person'`), or a run of spaces that Moses collapses.

Moses' rules are the corpus's language's (`Corpus.language`, BCP 47, its primary tag given to
`MosesDetokenizer(lang=…)`): French elisions join (`l' homme` → `l'homme`) and keep their space before `?`, `!`,
`:`; Czech, Finnish, Italian, Japanese and Chinese have their own rules. The English clitic steps (`does n't`,
`Islam 's`) run for English only, and STEL's mapping (`--normalizer stel`) is English and refused for another
language.
"""
from __future__ import annotations

import re
from functools import lru_cache

from core.errors import ApplicationError
from core.languages import primary_language

# STEL's `-lrb- ` → `(` and friends (Penn Treebank escapes); Moses leaves them alone.
_PTB_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}"}
_PTB_RE = re.compile(r"-(?:lrb|rrb|lsb|rsb|lcb|rcb)-", re.IGNORECASE)
_SPLIT_NEGATION = re.compile(r"(?<=\w) n't\b")
_SPLIT_CLITIC = re.compile(r"(?<=\w) ('(?:s|ll|re|ve|d|m))\b")

# A tokenization artefact: punctuation or a clitic set apart by a space, or an opening bracket followed by one.
TOKENIZATION_ARTEFACT = re.compile(
    r"""\s[.,;:!?%)\]}](?=\s|$)"""       # `Sudan .`, `Janjaweed , a`, `drum )`, `5 %`
    r"""|(?:^|\s)[(\[{]\s"""             # `( a tiny drum`
    r"""|\s'(?:s|ll|re|ve|d|m)\b"""      # `Islam 's`
    r"""|\sn't\b|\sn\s'\st\b"""          # `does n't`, `n ' t`
    r"""|-(?:lrb|rrb|lsb|rsb|lcb|rcb)-"""  # Penn Treebank escapes
    r"""|(?:^|\s)"\s""",                 # a stand-alone opening quote: `( " Sandro`
    re.IGNORECASE,
)


def has_tokenization_artefact(text: str) -> bool:
    """Whether `text` shows a trace of word tokenization (see `TOKENIZATION_ARTEFACT`)."""
    return TOKENIZATION_ARTEFACT.search(text) is not None


@lru_cache(maxsize=8)
def _detokenizer(language: str = "en"):  # noqa: ANN202 - sacremoses has no type hints
    # heavy: sacremoses loads only when text is detokenised
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang=language)


def text_detokenize(text: str, *, language: str = "en") -> str:
    """Undo word tokenization, with STEL's mapping as the reference (see the module docstring), by the rules of
    `language` (a BCP 47 tag).

    Whitespace runs become one space, as a side effect of splitting into tokens: double spaces, which the
    crowd's texts have and the tokenized originals never do, would leak the label as well.
    """
    if not text.strip():
        return text.strip()
    primary = primary_language(language)
    text = _PTB_RE.sub(lambda match: _PTB_BRACKETS[match.group(0).lower()], text)
    detokenized = _detokenizer(primary).detokenize(text.split(), unescape=False)
    if primary == "en":
        detokenized = _SPLIT_CLITIC.sub(r"\1", _SPLIT_NEGATION.sub("n't", detokenized))
    return detokenized.strip()


# --- STEL's mapping, the reference ---------------------------------------------------------------------

# STEL's replacement list, applied in order (quadruple_generators.py: FROM_PUNCTUATION / TO_TRANSLATION).
STEL_REPLACEMENTS: tuple[tuple[str, str], ...] = (
    ("-lrb- ", "("), (" -rrb-", ")"), ("-lsb- ", "["), (" -rsb-", "]"), ("-lcb- ", "{"), (" -rcb-", "}"),
    (" ' ll", "'ll"), (" ' re", "'re"), (" ' ve", "'ve"), ("n ' t", "n't"), (" 's", "'s"), (" , ", ", "),
    (" .", "."), (" : ", ": "), (" ! ", "! "), (" ? ", "? "), (" ) .", ")."), (" ( ", " ("), (" ) ", ") "),
    (" ; ", "; "), (" )", ")"), ("( ", "("), (" '", "'"), (' ".', '".'),
)


def text_detokenize_stel(text: str, *, language: str = "en") -> str:
    """STEL's own normalization of a TurkCorpus cell, step for step: pair the stand-alone `"` tokens of the
    text split on single spaces, apply the replacement list in order, drop one trailing space. Kept to check
    `text_detokenize` against and to reproduce STEL's texts exactly (`--normalizer stel`). English only."""
    if primary_language(language) != "en":
        raise ApplicationError(f"normalizer 'stel' is STEL's mapping of English text; the corpus is {language}: use "
                               "the moses normalizer, which has that language's rules", field="normalizer")
    joined = ""
    seen_opening = False
    for word in text.split(" "):
        if word != '"':
            joined += word + " "
        elif not seen_opening:
            joined += word
            seen_opening = True
        else:
            joined = joined[:-1] + word + " "
            seen_opening = False
    for old, new in STEL_REPLACEMENTS:
        joined = joined.replace(old, new)
    return joined[:-1] if joined.endswith(" ") else joined


NORMALIZERS = {"moses": text_detokenize, "stel": text_detokenize_stel}
