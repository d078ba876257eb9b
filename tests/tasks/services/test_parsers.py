"""The pair parsers on small files: aligned files line by line, a pairs TSV by its columns."""
from __future__ import annotations

import pytest

from core.errors import ApplicationError
from tasks.services.parsers import parse_aligned, parse_pairs


def test_aligned_files_pair_line_by_line(tmp_path):
    informal, formal = tmp_path / "informal.txt", tmp_path / "formal.txt"
    informal.write_text("gonna be late\nthx a lot\n", encoding="utf-8")
    formal.write_text("I am going to be late.\nThank you very much.\n", encoding="utf-8")
    rows, _ = parse_aligned([informal, formal])
    assert [(row.text_1, row.text_2) for row in rows] == [("gonna be late", "I am going to be late."),
                                                           ("thx a lot", "Thank you very much.")]


def test_aligned_files_of_different_lengths_are_refused(tmp_path):
    one, two = tmp_path / "a.txt", tmp_path / "b.txt"
    one.write_text("a\nb\n", encoding="utf-8")
    two.write_text("a\n", encoding="utf-8")
    with pytest.raises(ApplicationError):
        parse_aligned([one, two])


def test_a_pairs_tsv_reads_its_text_columns(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("text_a\ttext_b\nhey u\tHello, you.\n", encoding="utf-8")
    rows, _ = parse_pairs([path])
    assert [(row.text_1, row.text_2) for row in rows] == [("hey u", "Hello, you.")]
