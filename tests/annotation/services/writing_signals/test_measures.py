"""The pasting measure: its share of the text pasted from outside the page, and plain words when nothing was pasted."""
from __future__ import annotations

from annotation.services.writing_signals.measures import mostly_pasted


def record(*, pastes, pasted_chars, typed_chars=0, text_chars=100):
    page = {"pastes": pastes, "pasted_chars": pasted_chars, "paste_count": len(pastes), "typed_chars": typed_chars}
    return {"page": page, "server": {"text_chars": text_chars}}


def test_pastes_from_outside_count_and_pastes_of_the_source_do_not():
    measure = mostly_pasted(record(pastes=[{"chars": 40, "matched_source": False},
                                           {"chars": 10, "matched_source": True}], pasted_chars=50))
    assert measure.score == 0.4
    assert measure.details["source_chars"] == 10 and measure.details["outside_chars"] == 40


def test_nothing_pasted_says_so():
    measure = mostly_pasted(record(pastes=[], pasted_chars=0, typed_chars=100))
    assert measure.score == 0 and measure.evidence.startswith("nothing pasted")
