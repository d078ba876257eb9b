"""STEL's pair test with quote marks and spacing normalized (tasks/services/pair_test.py), on the real TurkCorpus:
quadruples whose pair differs only in how quotes were typed are no longer made, and audit_instances reports those
an earlier import made."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tasks.services import generation, parsers
from tasks.services import pair_test as pair_test_module
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import
from tasks.services.pair_test import pair_test, text_quotes_normalize

TURK_FILES = ("test.8turkers.organized.tsv", "tune.8turkers.organized.tsv")
# TurkCorpus rows (0-based over test + tune) where a turker typed the complex sentence again with only its quotes
# changed: `''x''` for `"x"` (274, 317, 1614), or spaces inside the quotes (`"Loving You "`, `"Just Say No ",`).
ARTEFACT_ROWS = {"274", "317", "1614", "1027", "586", "1182"}


@pytest.mark.parametrize(("typed", "normalized"), [
    ("that ''it was quinine's efficacy''.", 'that "it was quinine\'s efficacy".'),
    ('to promote " Just Say No " , she', 'to promote "Just Say No", she'),
    ('Due South, "Dr. Long Ball ", was', 'Due South, "Dr. Long Ball", was'),
    ("a \u201ccurly\u201d quote", 'a "curly" quote'),
    ('( " Sandro " )', '("Sandro")'),
    ("no  quotes\there", "no quotes here"),
])
def test_quotes_are_normalized_as_stel_joins_its_quote_tokens(typed, normalized):
    assert text_quotes_normalize(typed) == normalized


def test_a_pair_differing_only_in_quotes_or_spacing_fails_as_artefact_only():
    complex_text = 'As she continued to promote "Just Say No", she appeared in a video, "Stop the Madness".'
    spaced = complex_text.replace('"Just Say No"', '" Just Say No "').replace('"Stop the Madness"',
                                                                            '" Stop the Madness "')
    assert pair_test(complex_text, spaced) == "artefact_only"  # four spaces: STEL's own checks pass it
    assert pair_test(complex_text, complex_text.replace('"', "''")) == "artefact_only"
    # a real rewrite with quotes typed otherwise still passes; STEL's own checks come first
    assert pair_test(complex_text, "She promoted ''Just Say No'' and appeared in a video.") is None
    assert pair_test(complex_text, complex_text) == "identical"


def _turk(shared_data: Path, name: str, seed: int):  # noqa: ANN202
    corpus, summary = corpus_import(name=name, component="simplicity", import_format="turkcorpus",
                                    paths=[shared_data / "turkcorpus" / file for file in TURK_FILES], seed=seed)
    run = instances_generate(corpus=corpus, setup="quadruple", seed=seed)
    return corpus, summary, run


def _stel_checks_only(text_1: str, text_2: str, *, min_edit_distance: int = 4) -> str | None:
    """The pair test as it was: STEL's checks on the texts as stored, quotes as typed."""
    return pair_test_module._stel_checks(text_1, text_2, min_edit_distance=min_edit_distance)


def _audit(corpus_name: str) -> dict:
    out, err = StringIO(), StringIO()
    call_command("audit_instances", "--corpus", corpus_name, "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue().strip().splitlines()[-1]) | {"stderr": err.getvalue()}


@pytest.mark.slow  # imports the 2,359 rows twice
@pytest.mark.django_db
def test_the_real_turkcorpus_has_no_artefact_only_quadruple_and_earlier_ones_are_reported(shared_data, monkeypatch):
    # Seed 2: with the pair test on the texts as typed, 5 of 2,354 quadruples hold such a pair (rows 274, 586/1711
    # and 1182 drawn with the turker who only retyped the quotes).
    with monkeypatch.context() as patch:
        patch.setattr(parsers, "pair_test", _stel_checks_only)
        patch.setattr(generation, "pair_test", _stel_checks_only)
        before, _, before_run = _turk(shared_data, "turk-before", seed=2)
    report = _audit("turk-before")
    assert before_run.n_instances == 2354
    assert report["artefact_only"]["instances"] == 5
    assert report["passed"] is False and report["leaks"] == []
    assert any("differ only in how quote marks or spaces were typed" in w for w in report["warnings"])
    assert "warning:" in report["stderr"]
    reported = {example["instance"] for example in report["artefact_only"]["examples"]}
    assert {"QQ_s-t3-274-c-274_c-1478-s-t5-1478", "QQ_c-586-s-t4-586_s-t0-1711-c-1711"} <= reported
    example = next(e for e in report["artefact_only"]["examples"] if e["instance"].startswith("QQ_s-t3-274"))
    texts = example["pairs"][0]["texts"]
    assert "''it was quinine's" in texts[0] and '"it was quinine\'s' in texts[1]

    # Today's import: the turker is drawn again for those rows, and no quadruple holds such a pair.
    corpus, summary, run = _turk(shared_data, "turk-now", seed=2)
    assert summary["draws_artefact_only"] >= 4 and summary["rows_read"] == 2359
    assert run.n_instances == summary["pairs"] >= 2353
    for pair in corpus.pairs.filter(source_id__in=ARTEFACT_ROWS):
        assert pair_test(pair.text_1, pair.text_2) is None
        assert text_quotes_normalize(pair.text_1) != text_quotes_normalize(pair.text_2)
    now = _audit("turk-now")
    assert now["artefact_only"] == {"instances": 0, "examples": []}
    assert now["passed"] is True and not now["warnings"]
