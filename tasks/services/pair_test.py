"""STEL's pair test, one for every import format and for generation: is a pair usable as a paraphrase pair?

STEL (`QuadrupleGenerator.is_different_enough`) keeps a pair only when both texts are non-empty, they differ,
neither is a substring of the other, and their character edit distance is above 3. The same test screens the
anchor pair and the alternative pair of an instance.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

STEL_MIN_EDIT_DISTANCE = 4  # STEL: nltk.edit_distance(a, b) > 3
PAIR_TEST_REASONS = ("empty", "identical", "too_similar", "substring")


def pair_test(text_1: str, text_2: str, *, min_edit_distance: int = STEL_MIN_EDIT_DISTANCE) -> str | None:
    """The reason the pair fails (one of `PAIR_TEST_REASONS`, in STEL's order of checks), or None if it passes."""
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
