"""Every import format on the real files in ../shared/data, and every bad-input case."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rapidfuzz.distance import Levenshtein

from core.errors import ApplicationError
from tasks.models import Corpus, Order, ParallelPair, Setup, TaskInstance
from tasks.services.imports import corpus_import
from tasks.services.normalization import text_detokenize
from tasks.services.pair_test import PAIR_TEST_REASONS, pair_test

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> dict:
    out = StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def failing_command(*args: str) -> tuple[str, dict]:
    out = StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command(*args, stdout=out)
    assert excinfo.value.returncode == 1
    return str(excinfo.value), json.loads(out.getvalue().strip().splitlines()[-1])


def nothing_stored() -> bool:
    return not Corpus.objects.exists() and not ParallelPair.objects.exists() and not TaskInstance.objects.exists()


# --- aligned -------------------------------------------------------------------------------------------


def test_aligned_imports_the_nsubs_files_line_by_line(shared_data: Path) -> None:
    plain = shared_data / "stel" / "nsubs_translated_sentences.txt"
    substituted = shared_data / "stel" / "nsubs_sentences.txt"
    summary = run_command("import_corpus", "--name", "nsubs", "--component", "nbr_substitution", "--format",
                          "aligned", str(plain), str(substituted))
    assert summary["ok"] is True and summary["pairs"] == 100 and summary["skipped"] == 0
    corpus = Corpus.objects.get(name="nsubs")
    assert corpus.n_pairs == 100 and corpus.component.name == "nbr_substitution"
    first = corpus.pairs.get(position=0)
    assert (first.source_id, first.text_1, first.text_2) == ("1", "<3 friends forever", "<3 friends 4ever")
    lines_1 = plain.read_text(encoding="utf-8").splitlines()
    lines_2 = substituted.read_text(encoding="utf-8").splitlines()
    stored = list(corpus.pairs.order_by("position").values_list("text_1", "text_2"))
    assert stored == [(a.strip(), b.strip()) for a, b in zip(lines_1, lines_2, strict=True)]


def test_aligned_refuses_unequal_line_counts(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("One.\nTwo.\n", encoding="utf-8")
    message, summary = failing_command("import_corpus", "--name", "x", "--component", "formality", "--format",
                                       "aligned", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert "a.txt has 3 lines" in message and "b.txt has 2" in message
    assert summary["ok"] is False and summary["error"]["code"] == "unequal_line_counts"
    assert nothing_stored()


def test_aligned_names_file_and_line_of_an_empty_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n   \nthree\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    message, _ = failing_command("import_corpus", "--name", "x", "--component", "formality", "--format", "aligned",
                                 str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert message == f"{tmp_path / 'a.txt'}, line 2: empty text"
    assert nothing_stored()


def test_undecodable_bytes_are_reported_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes("fine\nalso fine\nbroken \xff here\n".encode("latin-1"))
    (tmp_path / "b.txt").write_text("Fine.\nAlso fine.\nBroken here.\n", encoding="utf-8")
    message, summary = failing_command("import_corpus", "--name", "x", "--component", "formality", "--format",
                                       "aligned", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert "a.txt, line 3: not valid UTF-8" in message
    assert summary["error"]["code"] == "invalid_encoding"
    assert nothing_stored()


def test_missing_file_and_wrong_file_count(tmp_path: Path) -> None:
    message, _ = failing_command("import_corpus", "--name", "x", "--component", "formality", "--format", "aligned",
                                 str(tmp_path / "nope.txt"), str(tmp_path / "nope2.txt"))
    assert "nope.txt: file not found" in message
    message, _ = failing_command("import_corpus", "--name", "x", "--component", "formality", "--format", "aligned",
                                 str(tmp_path / "nope.txt"))
    assert "exactly two files" in message
    assert nothing_stored()


def test_unknown_component_is_refused(shared_data: Path) -> None:
    message, _ = failing_command("import_corpus", "--name", "x", "--component", "sarcasm", "--format", "aligned",
                                 str(shared_data / "stel" / "nsubs_sentences.txt"),
                                 str(shared_data / "stel" / "nsubs_translated_sentences.txt"))
    assert "unknown style component 'sarcasm'" in message and "formality" in message
    assert nothing_stored()


def test_existing_name_is_refused_unless_replace(shared_data: Path) -> None:
    files = [str(shared_data / "stel" / "nsubs_translated_sentences.txt"),
             str(shared_data / "stel" / "nsubs_sentences.txt")]
    run_command("import_corpus", "--name", "nsubs", "--component", "nbr_substitution", "--format", "aligned", *files)
    first_id = Corpus.objects.get(name="nsubs").pk
    message, summary = failing_command("import_corpus", "--name", "nsubs", "--component", "nbr_substitution",
                                       "--format", "aligned", *files)
    assert "exists already" in message and "--replace" in message and summary["error"]["code"] == "corpus_exists"
    assert Corpus.objects.get(name="nsubs").pk == first_id and ParallelPair.objects.count() == 100
    summary = run_command("import_corpus", "--name", "nsubs", "--component", "nbr_substitution", "--format",
                          "aligned", "--replace", *files)
    assert summary["pairs"] == 100
    assert Corpus.objects.get(name="nsubs").pk != first_id and ParallelPair.objects.count() == 100


# --- turkcorpus ----------------------------------------------------------------------------------------


def test_turkcorpus_draws_one_of_eight_turkers_per_row_with_the_seed(shared_data: Path) -> None:
    path = shared_data / "turkcorpus" / "test.8turkers.organized.tsv"
    summary = run_command("import_corpus", "--name", "turk", "--component", "simplicity", "--format", "turkcorpus",
                          "--seed", "7", str(path))
    lines = [line.split("\t") for line in path.read_text("utf-8").splitlines()]
    assert summary["rows_read"] == len(lines) == 359
    reasons = PAIR_TEST_REASONS
    assert summary["skipped"] == sum(summary[f"skipped_{reason}"] for reason in reasons)
    assert summary["pairs"] + summary["skipped"] == 359 and summary["pairs"] >= 355
    assert summary["detokenize"] is True and summary["texts_changed"] > 359
    corpus = Corpus.objects.get(name="turk")
    assert corpus.n_skipped == summary["skipped"] and corpus.import_params["seed"] == 7
    turkers = set()
    for pair in corpus.pairs.all():
        cells = lines[int(pair.source_id)]  # STEL numbers the rows 0, 1, … (its ID c-85-s-t5-85)
        assert pair.metadata["id"] == cells[0]
        turker = int(pair.metadata["turker"][1:])
        turkers.add(turker)
        assert pair.text_1 == text_detokenize(cells[1].strip())
        assert pair.text_2 == text_detokenize(cells[2 + turker].strip())  # turk_0 is column 2
        assert pair.metadata["style_tags"] == {"1": "c", "2": f"s-t{turker}"}
        assert pair_test(pair.text_1, pair.text_2) is None
    assert turkers == set(range(8)) and sum(summary["turkers"].values()) == summary["pairs"]
    # the same seed reproduces the draw, another seed changes it
    again, _ = corpus_import(name="turk-again", component="simplicity", import_format="turkcorpus", paths=[path],
                             seed=7)
    other, _ = corpus_import(name="turk-other", component="simplicity", import_format="turkcorpus", paths=[path],
                             seed=8)
    texts = lambda c: list(c.pairs.order_by("position").values_list("source_id", "text_2"))  # noqa: E731
    assert texts(again) == texts(corpus)
    assert texts(other) != texts(corpus)


def test_turkcorpus_redraws_the_turker_when_the_pair_test_fails(tmp_path: Path) -> None:
    # Row 1: only turk_5 passes (the others are empty, equal, a substring or 2 edits away); row 2: none passes.
    complex_text = "The cat sat on the mat ."
    row_1 = ["1", complex_text, "", complex_text, "The cat sat on the mat", "The cat sits on the mat.", "",
             "A cat was sitting on a mat.", "", ""]
    row_2 = ["2", "It rained .", "It rained.", "", "", "", "", "", "", "It rained"]
    (tmp_path / "t.tsv").write_text("\n".join("\t".join(row) for row in (row_1, row_2)) + "\n", encoding="utf-8")
    _, summary = corpus_import(name="t", component="simplicity", import_format="turkcorpus",
                               paths=[tmp_path / "t.tsv"], seed=3)
    assert summary["pairs"] == 1 and summary["skipped"] == 1 and summary["rows_redrawn"] >= 1
    pair = ParallelPair.objects.get()
    assert (pair.source_id, pair.text_1, pair.text_2) == ("0", "The cat sat on the mat.", "A cat was sitting on a mat.")
    assert pair.metadata["turker"] == "t5" and pair.metadata["draws"] > 1
    assert pair.metadata["original"]["text_1"] == complex_text
    # --no-detokenize keeps the tokenized text; the space before the full stop then counts as an edit
    _, raw = corpus_import(name="raw", component="simplicity", import_format="turkcorpus", paths=[tmp_path / "t.tsv"],
                           seed=3, detokenize=False)
    assert raw["texts_changed"] == 0 and raw["detokenize"] is False
    assert Corpus.objects.get(name="raw").pairs.filter(text_1=complex_text).exists()


def test_turkcorpus_min_edit_distance_controls_the_discard(shared_data: Path) -> None:
    path = shared_data / "turkcorpus" / "test.8turkers.organized.tsv"
    _, strict = corpus_import(name="a", component="simplicity", import_format="turkcorpus", paths=[path], seed=1,
                              min_edit_distance=4)
    _, lenient = corpus_import(name="b", component="simplicity", import_format="turkcorpus", paths=[path], seed=1,
                               min_edit_distance=0)
    assert lenient["skipped_too_similar"] == 0 and lenient["redraws"] < strict["redraws"]
    assert all(Levenshtein.distance(p.text_1, p.text_2) >= 4 for p in Corpus.objects.get(name="a").pairs.all())
    assert any(Levenshtein.distance(p.text_1, p.text_2) < 4 for p in Corpus.objects.get(name="b").pairs.all())


def test_turkcorpus_reports_rows_with_too_few_columns(tmp_path: Path, shared_data: Path) -> None:
    lines = (shared_data / "turkcorpus" / "test.8turkers.organized.tsv").read_text("utf-8").splitlines()[:5]
    lines[3] = "4\tonly a complex sentence"
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    message, summary = failing_command("import_corpus", "--name", "t", "--component", "simplicity", "--format",
                                       "turkcorpus", str(tmp_path / "t.tsv"))
    assert "t.tsv, line 4" in message and "found 2" in message
    assert summary["error"]["code"] == "missing_columns"
    assert nothing_stored()


# --- pairs ---------------------------------------------------------------------------------------------


def _nsubs_rows(shared_data: Path, n: int = 20) -> list[tuple[str, str]]:
    plain = (shared_data / "stel" / "nsubs_translated_sentences.txt").read_text("utf-8").splitlines()[:n]
    subst = (shared_data / "stel" / "nsubs_sentences.txt").read_text("utf-8").splitlines()[:n]
    return list(zip(plain, subst, strict=True))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_pairs_formats_import_real_sentences(tmp_path: Path, shared_data: Path, suffix: str) -> None:
    import csv

    rows = _nsubs_rows(shared_data)
    path = tmp_path / f"pairs{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps({"id": f"n{i}", "text_a": a, "text_b": b}) + "\n"
                                for i, (a, b) in enumerate(rows)), encoding="utf-8")
    else:
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",")
            writer.writerow(["id", "text_a", "text_b"])
            writer.writerows([f"n{i}", a, b] for i, (a, b) in enumerate(rows))
    summary = run_command("import_corpus", "--name", "p", "--component", "nbr_substitution", "--format", "pairs",
                          str(path))
    assert summary["pairs"] == len(rows)
    stored = list(Corpus.objects.get(name="p").pairs.order_by("position").values_list("source_id", "text_1", "text_2"))
    assert stored == [(f"n{i}", a.strip(), b.strip()) for i, (a, b) in enumerate(rows)]


def test_pairs_without_id_column_number_the_rows(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("text_a,text_b\nhey,Hello.\nthx,Thank you.\n", encoding="utf-8")
    corpus, _ = corpus_import(name="p", component="formality", import_format="pairs", paths=[tmp_path / "p.csv"])
    assert list(corpus.pairs.values_list("source_id", flat=True)) == ["2", "3"]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("p.csv", "id,text_a\n1,hey\n", "p.csv, line 1: missing column(s) text_b"),
        ("p.csv", "id,text_a,text_b\n1,hey,Hello.\n1,thx,Thanks.\n", "p.csv, line 3: duplicate id '1'"),
        ("p.tsv", "text_a\ttext_b\nhey\t\n", "p.tsv, line 2: empty text_b"),
        ("p.jsonl", '{"text_a": "hey", "text_b": "Hello."}\n{"text_a": "x"\n', "p.jsonl, line 2: invalid JSON"),
        ("p.jsonl", '{"text_a": "hey"}\n', "p.jsonl, line 1: missing field(s) text_b"),
        ("p.xlsx", "whatever", "cannot tell the format of '.xlsx'"),
    ],
)
def test_pairs_bad_input_names_file_and_line(tmp_path: Path, name: str, content: str, expected: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(ApplicationError) as excinfo:
        corpus_import(name="bad", component="formality", import_format="pairs", paths=[tmp_path / name])
    assert expected in excinfo.value.message
    assert nothing_stored()


# --- stel ----------------------------------------------------------------------------------------------


def test_stel_import_keeps_published_instances(shared_data: Path) -> None:
    path = shared_data / "stel" / "quad_questions_char_contraction.tsv"
    summary = run_command("import_corpus", "--name", "stel-contraction", "--format", "stel", str(path))
    assert summary["instances"] == 100 and summary["component"] == "contraction"
    import csv

    # STEL wrote its TSVs with pandas: cells with quotes are CSV-quoted ("a ""b"" c") and stored unquoted.
    lines = list(csv.reader(path.read_text("utf-8").splitlines()[1:], delimiter="\t"))
    instances = list(TaskInstance.objects.filter(corpus__name="stel-contraction").order_by("position"))
    assert any('smoking."Bacon: Bacon and Ham Curing" in' in i.anchor_1 for i in instances)
    assert [i.stel_id for i in instances] == [cells[6] for cells in lines]
    for instance, cells in zip(instances, lines, strict=True):
        assert instance.setup == Setup.QUADRUPLE
        assert (instance.anchor_1, instance.anchor_2, instance.sentence_1, instance.sentence_2) == tuple(cells[1:5])
        assert instance.correct_alternative == int(cells[5])
        assert instance.published_votes is None
        # A1 and S1 share a style exactly when the published answer is S1-S2
        assert (instance.anchor_1_style == instance.sentence_1_style) == (instance.correct_order == Order.S1_S2)
    # STEL's IDs name the styles: "ction" texts are contracted (style 2 of the contraction component)
    first = instances[0]
    assert first.stel_id.startswith("QQ_ction") and first.anchor_1_style == 2 and "it'd" in first.anchor_1
    assert first.metadata["styles_from_id"] is True


def test_stel_import_refuses_a_component_mismatch_and_a_broken_row(tmp_path: Path, shared_data: Path) -> None:
    path = shared_data / "stel" / "quad_questions_char_substitution.tsv"
    message, _ = failing_command("import_corpus", "--name", "s", "--component", "formality", "--format", "stel",
                                 str(path))
    assert "line 2" in message and "'nbr_substitution' differs from the component 'formality' (--component)" in message
    lines = path.read_text("utf-8").splitlines()
    cells = lines[5].split("\t")
    cells[5] = "3"
    lines[5] = "\t".join(cells)
    (tmp_path / "bad.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    message, _ = failing_command("import_corpus", "--name", "s", "--format", "stel", str(tmp_path / "bad.tsv"))
    assert "bad.tsv, line 6: 'Correct Alternative' must be 1 or 2" in message
    (tmp_path / "header.tsv").write_text("a\tb\n1\t2\n", encoding="utf-8")
    message, _ = failing_command("import_corpus", "--name", "s", "--format", "stel", str(tmp_path / "header.tsv"))
    assert "header.tsv, line 1: missing column(s) 'Anchor 1'" in message and "not a STEL TSV" in message
    assert nothing_stored()


def test_stel_import_refuses_duplicate_ids(tmp_path: Path, shared_data: Path) -> None:
    lines = (shared_data / "stel" / "quad_questions_char_contraction.tsv").read_text("utf-8").splitlines()
    (tmp_path / "dup.tsv").write_text("\n".join([*lines[:4], lines[2]]) + "\n", encoding="utf-8")
    message, _ = failing_command("import_corpus", "--name", "d", "--format", "stel", str(tmp_path / "dup.tsv"))
    assert "dup.tsv, line 5: duplicate ID" in message and "line 3" in message
    assert nothing_stored()


# --- the pair test of every format ---------------------------------------------------------------------


@pytest.mark.parametrize("import_format", ["aligned", "pairs"])
def test_every_format_drops_pairs_that_fail_stels_pair_test(tmp_path: Path, import_format: str) -> None:
    pairs = [
        ("hey whats up lol", "Hello, how are you?"),           # kept
        ("the same sentence", "the same sentence"),          # identical
        ("I agree", "I agree with you completely."),         # substring
        ("gonna go now", "gona go now!"),                    # 2 edits
        ("u r so rite", "You are quite right ."),            # kept; detokenized when asked
    ]
    if import_format == "aligned":
        (tmp_path / "a.txt").write_text("".join(a + "\n" for a, _ in pairs), encoding="utf-8")
        (tmp_path / "b.txt").write_text("".join(b + "\n" for _, b in pairs), encoding="utf-8")
        paths = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    else:
        (tmp_path / "p.jsonl").write_text("".join(json.dumps({"text_a": a, "text_b": b}) + "\n" for a, b in pairs),
                                          encoding="utf-8")
        paths = [str(tmp_path / "p.jsonl")]
    summary = run_command("import_corpus", "--name", "f", "--component", "formality", "--format", import_format,
                          "--detokenize", *paths)
    assert (summary["pairs"], summary["skipped"]) == (2, 3)
    assert (summary["skipped_identical"], summary["skipped_substring"], summary["skipped_too_similar"]) == (1, 1, 1)
    assert summary["texts_changed"] == 1 and summary["detokenize"] is True
    assert list(Corpus.objects.get(name="f").pairs.values_list("source_id", "text_2")) == [
        ("1", "Hello, how are you?"), ("5", "You are quite right.")]
    # a characteristic keeps pairs a few characters apart (STEL tested edit distance for dimensions only)
    summary = run_command("import_corpus", "--name", "c", "--component", "contraction", "--format", import_format,
                          *paths)
    assert summary["pairs"] == 3 and summary["skipped_too_similar"] == 0 and summary["detokenize"] is False


# --- the registry of corpus formats ---------------------------------------------------------------------------


def test_the_corpus_formats_are_listed_once() -> None:
    """tasks.services.corpus_formats is the list: the command, the API, the admin form and the model follow it."""
    from tasks.forms import CorpusImportForm
    from tasks.management.commands.import_corpus import Command
    from tasks.models import Corpus
    from tasks.serializers import CorpusImportInput
    from tasks.services.corpus_formats import CORPUS_FORMATS

    names = list(CORPUS_FORMATS)
    assert names == ["aligned", "turkcorpus", "pairs", "stel"]
    parser = Command().create_parser("manage.py", "import_corpus")
    assert next(list(a.choices) for a in parser._actions if "--format" in a.option_strings) == names
    assert list(CorpusImportInput().fields["format"].choices) == names
    assert [value for value, _ in CorpusImportForm().fields["import_format"].choices] == names
    labels = dict(Corpus.Format.choices)  # the database's list also has "built" (corpora made by a builder)
    assert {name: labels[name] for name in names} == {name: spec.label for name, spec in CORPUS_FORMATS.items()}
    assert [name for name, spec in CORPUS_FORMATS.items() if spec.files_by_role] == ["aligned"]
    assert all((spec.rows == "pairs") == (spec.parse_pairs is not None) for spec in CORPUS_FORMATS.values())
