"""Text normalization at import, checked against STEL's own mapping on every text of the shared TurkCorpus files."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import ApplicationError
from tasks.models import Corpus
from tasks.services.imports import corpus_import
from tasks.services.normalization import has_tokenization_artefact, text_detokenize, text_detokenize_stel

TURK_FILES = ("test.8turkers.organized.tsv", "tune.8turkers.organized.tsv")


def turk_cells(shared_data: Path) -> tuple[list[str], list[str]]:
    complex_side, simple_side = [], []
    for name in TURK_FILES:
        for line in (shared_data / "turkcorpus" / name).read_text("utf-8").splitlines():
            cells = line.split("\t")
            complex_side.append(cells[1].strip())
            simple_side += [cell.strip() for cell in cells[2:] if cell.strip()]
    return complex_side, simple_side


@pytest.mark.parametrize(("tokenized", "stel"), [
    # Worked by hand through STEL's adapt_quotation_marks + adapt_punctuation (quadruple_generators.py).
    ("Alessandro ( \" Sandro \" ) Mazzola ( born 8 November 1942 ) is an Italian former football player .",
     "Alessandro (\"Sandro\") Mazzola (born 8 November 1942) is an Italian former football player."),
    ("Jeddah is the principal gateway to Mecca , Islam 's holiest city , which Muslims visit .",
     "Jeddah is the principal gateway to Mecca, Islam's holiest city, which Muslims visit."),
    ("Human skin hues can range from very dark brown to very pale pink .",  # as in STEL's published instances
     "Human skin hues can range from very dark brown to very pale pink."),
    ("It -lrb- the drum -rrb- is loud ; they ' re sure .", "It (the drum) is loud; they're sure."),
])
def test_stel_mapping_and_the_detokenizer_agree_on_worked_examples(tokenized: str, stel: str) -> None:
    assert text_detokenize_stel(tokenized) == stel
    assert text_detokenize(tokenized) == stel


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_detokenizer_reproduces_stels_normalization_on_every_shared_turkcorpus_text(shared_data: Path) -> None:
    complex_side, simple_side = turk_cells(shared_data)
    texts = complex_side + simple_side
    assert len(texts) > 21_000
    ours = [text_detokenize(text) for text in texts]
    stel = [text_detokenize_stel(text) for text in texts]
    # STEL's replacements are case-sensitive (it read true-cased files: `-LRB-` stays) and it splits on " " only.
    comparable = [i for i, text in enumerate(texts) if "-LRB-" not in text and "\xa0" not in text]
    assert len(comparable) >= len(texts) - 10
    # The same characters in every text: both only move spaces.
    assert all(ours[i].replace(" ", "") == stel[i].replace(" ", "") for i in comparable)
    # The same spacing (up to runs of spaces) in ~98.7 %; the rest are tokens STEL's list leaves apart.
    same = sum(" ".join(ours[i].split()) == " ".join(stel[i].split()) for i in comparable)
    assert same / len(comparable) >= 0.98
    leftovers = [stel[i] for i in comparable if " ".join(ours[i].split()) != " ".join(stel[i].split())]
    assert sum(has_tokenization_artefact(text) for text in leftovers) > 0  # `5 %`, `$ 84`: STEL keeps them apart
    assert sum(map(has_tokenization_artefact, ours)) <= sum(map(has_tokenization_artefact, stel))


def rate(texts: list[str]) -> float:
    return sum(map(has_tokenization_artefact, texts)) / len(texts)


def test_raw_turkcorpus_leaks_and_both_sides_are_clean_after_import(shared_data: Path) -> None:
    complex_side, simple_side = turk_cells(shared_data)
    assert rate(complex_side) > 0.99 and 0.25 < rate(simple_side) < 0.45  # the leak: tokenized vs typed
    assert rate([text_detokenize_stel(t) for t in complex_side]) < 0.02  # STEL's own mapping: ~1 %


@pytest.mark.slow  # seconds: out of `make test-fast`
@pytest.mark.django_db
def test_imported_turkcorpus_has_at_most_one_percent_artefacts_on_each_side(shared_data: Path) -> None:
    paths = [shared_data / "turkcorpus" / name for name in TURK_FILES]
    corpus, summary = corpus_import(name="turk", component="simplicity", import_format="turkcorpus", paths=paths,
                                    seed=0)
    pairs = list(corpus.pairs.values_list("text_1", "text_2"))
    assert 2_340 <= summary["pairs"] <= 2_359 and summary["rows_read"] == 2_359  # STEL: about 2,352 usable
    assert len(summary["turkers"]) == 8 and min(summary["turkers"].values()) > 200
    assert rate([p[0] for p in pairs]) <= 0.01 and rate([p[1] for p in pairs]) <= 0.01
    assert summary["texts_changed"] > 2_359  # every complex side and a third of the simple ones
    _, raw = corpus_import(name="raw", component="simplicity", import_format="turkcorpus", paths=paths, seed=0,
                           detokenize=False)
    raw_pairs = list(Corpus.objects.get(name="raw").pairs.values_list("text_1", "text_2"))
    assert raw["texts_changed"] == 0 and rate([p[0] for p in raw_pairs]) > 0.99


# --- by the corpus's language (issue 33) ---------------------------------------------------------------------------


def test_detokenization_follows_the_language():
    tokenized = "C' est l' ami de Jean , n' est -ce pas ?"
    assert text_detokenize(tokenized, language="fr") == "C'est l'ami de Jean, n'est -ce pas ?"
    assert text_detokenize(tokenized, language="en") == "C' est l' ami de Jean, n' est -ce pas?"
    assert text_detokenize("私 は 学生 です 。", language="ja") == "私は学生です。"
    assert text_detokenize("Islam 's Earth .", language="en") == "Islam's Earth."


@pytest.mark.django_db
def test_a_french_corpus_is_detokenized_by_french_rules_and_stels_mapping_refused(tmp_path: Path) -> None:
    informal = tmp_path / "informal.txt"
    formal = tmp_path / "formal.txt"
    informal.write_text("c' est l' ami de jean , tu vois ?\n", encoding="utf-8")
    formal.write_text("Il s' agit de l' ami de Jean , n' est -ce pas ?\n", encoding="utf-8")
    corpus, _ = corpus_import(name="fr-tok", component="formality", import_format="aligned",
                              paths=[informal, formal], detokenize=True, language="fr")
    pair = corpus.pairs.get()
    assert pair.text_1 == "c'est l'ami de jean, tu vois ?" and pair.text_2.startswith("Il s'agit de l'ami")
    with pytest.raises(ApplicationError, match="normalizer 'stel' is STEL's mapping of English text"):
        corpus_import(name="fr-stel", component="formality", import_format="aligned", paths=[informal, formal],
                      detokenize=True, normalizer="stel", language="fr")
    assert not Corpus.objects.filter(name="fr-stel").exists()
