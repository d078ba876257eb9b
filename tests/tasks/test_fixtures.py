"""The demo/seed fixtures: exact copies of the shared data, the screening questions, and that they import."""
from __future__ import annotations

import csv
import importlib.util
import json
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from tasks.models import Corpus, ScreeningQuestion, StyleComponent

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
CORPORA = FIXTURES / "corpora"


def command_summary(name: str, *args: str) -> dict:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def screening_tsv_rows(shared_data: Path) -> list[dict[str, str]]:
    with (shared_data / "stel" / "screening_questions.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.django_db
def test_screening_questions_fixture_matches_the_tsv_row_by_row(shared_data: Path) -> None:
    call_command("loaddata", "screening_questions", stdout=StringIO())
    rows = screening_tsv_rows(shared_data)
    questions = list(ScreeningQuestion.objects.select_related("component").order_by("pk"))[:10]
    assert len(rows) == len(questions) == 10
    for row, question in zip(rows, questions, strict=True):
        assert question.component.name == row["style type"]
        assert question.correct_order == row["Correct Order"]
        assert (question.anchor_1, question.anchor_2) == (row["Anchor 1"], row["Anchor 2"])
        assert (question.sentence_1, question.sentence_2) == (row["Alternative 1.1"], row["Alternative 1.2"])
        assert question.source == "STEL (Wegmann & Nguyen 2021), Table 5"
        assert question.active
        # STEL's simplicity questions need A2 to be obvious: quadruples only; every other STEL question fits all.
        assert question.setups == (["quadruple"] if row["style type"] == "simplicity" else [])
    assert [q.name for q in questions[:3]] == ["stel-formality-1", "stel-formality-2", "stel-simplicity-1"]
    # Curly quotes survive exactly.
    assert questions[0].sentence_2 == "It\u2019s cause ya got no sense."
    assert StyleComponent.objects.get(name="shakespeare").label_2 == "shakespearean"


@pytest.mark.django_db
def test_screening_questions_fixture_loads_twice_without_duplicates() -> None:
    call_command("loaddata", "screening_questions", stdout=StringIO())
    call_command("loaddata", "screening_questions", stdout=StringIO())
    assert ScreeningQuestion.objects.count() == 16 + 6 * 4
    assert StyleComponent.objects.filter(name="shakespeare").count() == 1


@pytest.mark.django_db
def test_every_demo_component_and_setup_has_enough_fair_screening_questions() -> None:
    """The demo's studies ask for 2 screening questions per batch: each component/setup they use must have them,
    and the authored ones (not STEL's) are the ones a simplicity triple or a contraction study draws."""
    from annotation.services.screening import screening_questions_for

    call_command("loaddata", "screening_questions", stdout=StringIO())
    for name in ("formality", "simplicity", "contraction", "nbr_substitution"):
        component_id = StyleComponent.objects.get(name=name).pk
        for setup in ("quadruple", "triple", "style-or-content"):
            fair = screening_questions_for(setup=setup, component_ids=[component_id])
            assert len(fair) >= 2, (name, setup)
            assert all(q.component_id == component_id for q in fair)
    simplicity = StyleComponent.objects.get(name="simplicity").pk
    triple = [q.name for q in screening_questions_for(setup="triple", component_ids=[simplicity])]
    assert triple == ["stylecrowd-simplicity-1", "stylecrowd-simplicity-2", "stylecrowd-simplicity-3"]
    authored = ScreeningQuestion.objects.filter(name__startswith="stylecrowd-", language="en")
    assert authored.count() == 6 and set(authored.values_list("source", flat=True)) == {
        "StyleCrowd authors (demo questions; the answers are public)"}


@pytest.mark.django_db
def test_each_shipped_language_has_its_own_screening_questions() -> None:
    """A formality or simplicity study in each shipped language finds 2 fair questions in its language, and none of
    another language (issue 33)."""
    from annotation.services.screening import screening_questions_for  # annotation's rule, read here on the fixture

    call_command("loaddata", "screening_questions", stdout=StringIO())
    assert set(ScreeningQuestion.objects.filter(source__startswith="STEL").values_list("language", flat=True)) == {
        "en"}
    for language in ("fr", "de", "pt-BR", "it", "es", "ar"):
        for name in ("formality", "simplicity"):
            component_id = StyleComponent.objects.get(name=name).pk
            for setup in ("quadruple", "triple"):
                fair = screening_questions_for(setup=setup, component_ids=[component_id], language=language)
                assert len(fair) == 2 and {q.language for q in fair} == {language}, (language, name, setup)
                assert all(q.name.startswith(f"stylecrowd-{language.lower()}-{name}-") for q in fair)
                assert all("written for the project" in q.source for q in fair)
                # Every question is a real contrast: the two sentences and the two anchors differ.
                assert all(q.anchor_1 != q.anchor_2 and q.sentence_1 != q.sentence_2 for q in fair)


def test_screening_fixture_is_what_its_generator_writes(shared_data: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_screening_questions", FIXTURES / "make_screening_questions.py")
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    expected = generator.fixture(generator.screening_rows(shared_data / "stel" / "screening_questions.tsv"))
    assert json.loads((FIXTURES / "screening_questions.json").read_text(encoding="utf-8")) == expected


@pytest.mark.parametrize(("fixture", "original"), [
    ("corpora/nsubs_sentences.txt", "stel/nsubs_sentences.txt"),
    ("corpora/nsubs_translated_sentences.txt", "stel/nsubs_translated_sentences.txt"),
    ("LICENSE-STEL", "stel/LICENSE"),
    ("LICENSE-TurkCorpus", "turkcorpus/LICENSE"),
])
def test_copies_are_unchanged(fixture: str, original: str, shared_data: Path) -> None:
    assert (FIXTURES / fixture).read_bytes() == (shared_data / original).read_bytes()


def test_turkcorpus_sample_is_the_first_150_rows(shared_data: Path) -> None:
    original = (shared_data / "turkcorpus" / "test.8turkers.organized.tsv").read_bytes().split(b"\n")
    sample = (CORPORA / "turkcorpus_sample.tsv").read_bytes()
    assert sample == b"\n".join(original[:150]) + b"\n"
    assert sample.count(b"\n") == 150


def test_formality_sample_is_aligned_and_original() -> None:
    informal = (CORPORA / "formality_informal.txt").read_text(encoding="utf-8").split("\n")
    formal = (CORPORA / "formality_formal.txt").read_text(encoding="utf-8").split("\n")
    assert informal[-1] == formal[-1] == ""  # each file ends with a newline, and has no other empty line
    informal, formal = informal[:-1], formal[:-1]
    assert len(informal) == len(formal) >= 60
    assert all(line.strip() == line and line for line in informal + formal)
    assert len(set(informal)) == len(informal) and len(set(formal)) == len(formal)
    assert all(a != b for a, b in zip(informal, formal, strict=True))
    # The formal side reads as formal: capitalized, ends with sentence punctuation, no chat spellings.
    chat = {"u", "ur", "lol", "idk", "gonna", "r", "tbh", "omg"}
    assert all(line[0].isupper() and line[-1] in ".?!" for line in formal)
    assert not any(chat & set(line.lower().replace(",", " ").split()) for line in formal)
    assert sum(bool(chat & set(line.lower().replace(",", " ").split())) for line in informal) >= 20


def test_readme_credits_every_fixture() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    # Python's bytecode cache (ignored by git) is no fixture: test_screening_fixture_is_what_its_generator_writes
    # imports the generator, which writes one wherever PYTHONDONTWRITEBYTECODE is not set.
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and "__pycache__" not in p.relative_to(FIXTURES).parts]
    for path in sorted(p.relative_to(FIXTURES).as_posix() for p in files):
        if path not in {"README.md", "make_screening_questions.py"} and not path.startswith("LICENSE"):
            assert f"`{path}`" in readme, path
    for credit in ["Xu", "GPL-3.0", "Wegmann & Nguyen", "MIT", "GYAFC", "--format aligned", "GPL-3.0-or-later"]:
        assert credit in readme


@pytest.mark.slow  # about a second: out of `make test-fast`
@pytest.mark.django_db
def test_demo_corpora_import_as_make_demo_does() -> None:
    formality = command_summary(
        "import_corpus", "--name", "formality-demo", "--component", "formality", "--format", "aligned",
        str(CORPORA / "formality_informal.txt"), str(CORPORA / "formality_formal.txt"),
    )
    turk = command_summary(
        "import_corpus", "--name", "turkcorpus-sample", "--component", "simplicity", "--format", "turkcorpus",
        "--seed", "1", str(CORPORA / "turkcorpus_sample.tsv"),
    )
    nsubs = command_summary(
        "import_corpus", "--name", "nsubs", "--component", "nbr_substitution", "--format", "aligned",
        str(CORPORA / "nsubs_translated_sentences.txt"), str(CORPORA / "nsubs_sentences.txt"),
    )
    contraction = command_summary(
        "build_contraction_corpus", "--name", "contraction-demo", str(CORPORA / "contraction_sentences.txt")
    )
    assert (formality["pairs"], nsubs["pairs"], contraction["converted"]) == (80, 100, 79)
    assert turk["rows_read"] == 150 and turk["pairs"] + turk["skipped"] == 150 and turk["pairs"] > 100
    components = dict(Corpus.objects.values_list("name", "component__name"))
    assert components == {"formality-demo": "formality", "turkcorpus-sample": "simplicity",
                          "nsubs": "nbr_substitution", "contraction-demo": "contraction"}
    pair = Corpus.objects.get(name="formality-demo").pairs.get(position=0)
    assert (pair.text_1, pair.text_2) == ("lol i dunno, ask ur mom", "I do not know; you should ask your mother.")
