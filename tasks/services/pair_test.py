"""STEL's pair test, one for every import format and for generation: is a pair usable as a paraphrase pair?

STEL (`QuadrupleGenerator.is_different_enough`) keeps a pair only when both texts are non-empty, they differ,
neither is a substring of the other, and their character edit distance is above 3. The same test screens the
anchor pair and the alternative pair of an instance.

A pair that passes only through how its quote marks were typed or spaced (a turker's `''` where the complex side
has `"`, `" Just Say No ",` beside `"Just Say No",`) is no paraphrase pair either: the test is run again on both
texts with their quotes normalized (`text_quotes_normalize`: every double quote as `"`, set against the words it
encloses as STEL's `adapt_quotation_marks` sets its stand-alone `"` tokens, whitespace runs as one space), and a
pair that fails only there fails as `artefact_only`.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

STEL_MIN_EDIT_DISTANCE = 4  # STEL: nltk.edit_distance(a, b) > 3
PAIR_TEST_REASONS = ("empty", "identical", "too_similar", "substring", "artefact_only")

# Ways a double quote is typed: PTB/LaTeX `` and '', curly and low-9 quotes, the double prime.
_DOUBLE_QUOTE_VARIANTS = re.compile("''|``|[\u201c\u201d\u201e\u201f\u2033]")
_DOUBLE_QUOTE = re.compile(r'\s*"\s*')


def text_quotes_normalize(text: str) -> str:
    """`text` with its double quotes typed one way and spaced as in running text: `''x''` and `" x "` are `"x"`.

    STEL's `adapt_quotation_marks` joins each stand-alone `"` token to the word after it (an opening quote) or
    before it (a closing one), alternating; here the same alternation applies to every double quote, whatever
    its neighbours, after the typed variants are mapped to `"` and whitespace runs to one space."""
    text = " ".join(_DOUBLE_QUOTE_VARIANTS.sub('"', text).split())
    parts = _DOUBLE_QUOTE.split(text)
    if len(parts) == 1:
        return text
    out = [parts[0]]
    for index, part in enumerate(parts[1:]):
        opening = index % 2 == 0
        before = out[-1]
        if opening and before and not before.endswith((" ", "(", "[", "{")):
            out[-1] = before + " "  # an opening quote keeps the space before it
        out.append('"')
        if not opening and part and part[0].isalnum():
            out.append(" ")  # a closing quote keeps the space after it
        out.append(part)
    return "".join(out)


def pair_test(text_1: str, text_2: str, *, min_edit_distance: int = STEL_MIN_EDIT_DISTANCE) -> str | None:
    """The reason the pair fails (one of `PAIR_TEST_REASONS`, in STEL's order of checks), or None if it passes:
    STEL's checks on the texts, then again on their quote-normalized forms (`artefact_only`)."""
    reason = _stel_checks(text_1, text_2, min_edit_distance=min_edit_distance)
    if reason is not None:
        return reason
    normalized = _stel_checks(text_quotes_normalize(text_1), text_quotes_normalize(text_2),
                              min_edit_distance=min_edit_distance)
    return "artefact_only" if normalized is not None else None


def _stel_checks(text_1: str, text_2: str, *, min_edit_distance: int) -> str | None:
    if not text_1 or not text_2:
        return "empty"
    if text_1 == text_2:
        return "identical"
    distance = Levenshtein.distance(text_1, text_2, score_cutoff=min_edit_distance)
    if min_edit_distance > 0 and distance < min_edit_distance:
        return "too_similar"
    if text_1 in text_2 or text_2 in text_1:
        return "substring"
    return None


def pair_test_counts(pairs: Iterable[tuple[str, str]], *, min_edit_distance: int) -> Counter[str]:
    """How many of `pairs` fail, by reason."""
    counts: Counter[str] = Counter()
    for text_1, text_2 in pairs:
        reason = pair_test(text_1, text_2, min_edit_distance=min_edit_distance)
        if reason:
            counts[reason] += 1
    return counts
