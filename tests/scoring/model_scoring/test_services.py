"""`manage.py score_stel` end to end on STEL's published instances, with constructed ties, triples and bad input."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from core.errors import ApplicationError
from scoring.model_scoring.benchmark_io import benchmark_read
from scoring.model_scoring.methods import methods_language_check
from tasks.stel.tsv import StelRecord

HEADER = ["", "Anchor 1", "Anchor 2", "Alternative 1.1", "Alternative 1.2", "Correct Alternative", "ID",
          "# Votes out of 5 for Correct Alternative", "style type"]


def score(*args: str, **options) -> dict:
    out, err = io.StringIO(), io.StringIO()
    call_command("score_stel", *args, json=True, stdout=out, stderr=err, **options)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def score_fails(*args: str, **options) -> dict:
    out = io.StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("score_stel", *args, json=True, stdout=out, stderr=io.StringIO(), **options)
    assert excinfo.value.returncode == 1
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] is False
    return summary["error"]


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def write_tsv(path: Path, rows: list[list[str]], header: list[str] = HEADER) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.mark.model
@pytest.mark.django_db  # the model's embeddings go through the model cache, in the database
def test_published_contraction_instances_with_packaged_minilm(shared_data, tmp_path):
    benchmark = shared_data / "stel" / "quad_questions_char_contraction.tsv"
    predictions = tmp_path / "predictions.tsv"
    summary = score(str(benchmark), methods="st:minilm,char3gram,uppercase", predictions=str(predictions),
                    compare="st:minilm,char3gram", seed=3)
    assert summary["ok"] is True
    validated = summary["sets"]["validated"]
    assert validated["instances"] == 100 and validated["quadruples"] == 100
    minilm = validated["methods"]["st:minilm"]
    # A trained sentence encoder is well above chance on contractions (STEL reports ~0.8 for such models).
    assert 0.6 < minilm["overall"]["accuracy"] <= 1.0
    assert set(minilm["components"]) == {"contraction"}
    assert minilm["components"]["contraction"]["accuracy"] == minilm["overall"]["accuracy"]
    assert 0.0 <= minilm["overall"]["undecided_share"] <= 1.0
    # Upper-case share alone solves contractions: "it'd" vs "it had" changes the share of capitals.
    assert validated["methods"]["uppercase"]["overall"]["accuracy"] > 0.9
    [comparison] = summary["compare"]
    assert comparison["methods"] == ["st:minilm", "char3gram"] and 0.0 <= comparison["pvalue"] <= 1.0
    assert sum(map(sum, comparison["table"])) == 100

    rows = read_tsv(predictions)
    assert len(rows) == 100 * 3  # one row per instance and method
    ids = [row["ID"] for row in read_tsv(benchmark)]
    assert sorted({row["ID"] for row in rows}) == sorted(ids)
    gold = {row["ID"]: int(row["Correct Alternative"]) for row in read_tsv(benchmark)}
    right = 0
    for row in rows:
        assert row["prediction"] in {"0", "1", "2"} and row["forced_prediction"] in {"1", "2"}
        if row["prediction"] != "0":
            assert row["forced_prediction"] == row["prediction"]
        s11, s12, s22, s21 = (float(row[k]) for k in ("sim_a1_s1", "sim_a1_s2", "sim_a2_s2", "sim_a2_s1"))
        keep, swap = (1 - s11) ** 2 + (1 - s22) ** 2, (1 - s12) ** 2 + (1 - s21) ** 2
        if abs(keep - swap) > 1e-5:  # the file rounds to 6 digits; clear cases must follow the rule
            assert row["prediction"] == ("1" if keep < swap else "2")
        if row["method"] == "st:minilm":
            right += (int(row["prediction"]) == gold[row["ID"]]) + 0.5 * (row["prediction"] == "0")
    assert right / 100 == pytest.approx(minilm["overall"]["accuracy"])


def test_validated_and_full_sets_are_reported_side_by_side(shared_data):
    stel = shared_data / "stel"
    summary = score(str(stel / "quad_questions_char_contraction.tsv"), methods="word_length,levenshtein",
                    full=[str(stel / "quad_questions_char_contraction.tsv"),
                          str(stel / "quad_questions_char_substitution.tsv")])
    assert set(summary["sets"]) == {"validated", "full"}
    assert summary["sets"]["validated"]["instances"] == 100
    full = summary["sets"]["full"]
    assert full["instances"] == 200
    assert set(full["methods"]["word_length"]["components"]) == {"contraction", "nbr_substitution"}
    # The contraction component of the full set is the validated set itself: same numbers.
    assert (full["methods"]["word_length"]["components"]["contraction"]
            == summary["sets"]["validated"]["methods"]["word_length"]["overall"])


def test_ties_count_half_and_get_seeded_random_predictions(tmp_path):
    rows = []
    for i in range(40):  # identical alternatives: every method ties → undecided
        rows.append([str(i), f"Anchor number {i}.", f"anchor number {i}", "Same alternative.", "Same alternative.",
                     "1" if i % 2 else "2", f"TIE-{i}", "", "formality"])
    # One clear case: A1 and S1 are the very same sentence, as are A2 and S2.
    rows.append(["40", "Hello THERE!!", "hello there", "Hello THERE!!", "hello there", "1", "CLEAR", "5", "formality"])
    benchmark = write_tsv(tmp_path / "ties.tsv", rows)
    first, second, other = tmp_path / "p1.tsv", tmp_path / "p2.tsv", tmp_path / "p3.tsv"
    summary = score(str(benchmark), methods="char3gram,punctuation", predictions=str(first), seed=11)
    score(str(benchmark), methods="char3gram,punctuation", predictions=str(second), seed=11)
    score(str(benchmark), methods="char3gram,punctuation", predictions=str(other), seed=12)
    table = summary["sets"]["validated"]["methods"]["char3gram"]
    assert table["overall"]["undecided"] == 40
    assert table["overall"]["accuracy"] == pytest.approx((1 + 0.5 * 40) / 41)
    assert table["overall"]["accuracy_decided"] == 1.0
    predicted = read_tsv(first)
    ties = [r for r in predicted if r["ID"].startswith("TIE")]
    assert {r["prediction"] for r in ties} == {"0"}
    assert {r["forced_prediction"] for r in ties} == {"1", "2"}
    assert [r["ID"] for r in predicted if r["ID"] == "CLEAR" and r["prediction"] == "1"] == ["CLEAR", "CLEAR"]
    assert first.read_text() == second.read_text()  # same seed, same file
    assert first.read_text() != other.read_text()


def test_triples_with_empty_anchor_2_or_no_anchor_2_column(tmp_path):
    rows = [["0", "Hey wassup?", "", "Good morning, how are you?", "yo whats up", "2", "T-1", "", "formality"],
            ["1", "Good evening, sir.", "", "Good afternoon, madam.", "hiya", "1", "T-2", "", "formality"]]
    with_column = write_tsv(tmp_path / "triples.tsv", rows)
    without_column = write_tsv(tmp_path / "triples_no_a2.tsv", [r[:2] + r[3:] for r in rows],
                               header=HEADER[:2] + HEADER[3:])
    predictions = tmp_path / "p.tsv"
    for benchmark in (with_column, without_column):
        summary = score(str(benchmark), methods="punctuation,uppercase", predictions=str(predictions))
        validated = summary["sets"]["validated"]
        assert validated["quadruples"] == 0 and validated["instances"] == 2
        # punctuation, T-1: cos(("?"), (",", "?")) = 1/√2 > cos(("?"), none) = 0 → predicts 1, gold 2 (wrong);
        # T-2: cos((",", "."), (",", ".")) = 1 > 0 → predicts 1 (right). Accuracy 0.5.
        assert validated["methods"]["punctuation"]["overall"]["accuracy"] == pytest.approx(0.5)
        rows_out = read_tsv(predictions)
        assert {r["sim_a2_s2"] for r in rows_out} == {""}  # triples have no A2 similarities


def test_cells_are_read_stripped_and_a_blank_anchor_2_makes_a_triple(tmp_path):
    rows = [["0", "  Hey wassup? ", "   ", " Good morning, how are you?", "yo whats up  ", "2", " T-1 ", "",
             " formality "],
            ["1", "Good evening, sir.", " Good evening, madam. ", "Good afternoon, madam.", "hiya", "1", "Q-1", "4",
             "formality"]]
    benchmark = write_tsv(tmp_path / "padded.tsv", rows)
    triple, quadruple = benchmark_read(benchmark)
    assert triple == StelRecord(line=2, anchor_1="Hey wassup?", anchor_2="", alternative_1="Good morning, how are you?",
                                alternative_2="yo whats up", correct=2, id="T-1", votes=None, style_type="formality",
                                where=f"{benchmark}:2")
    assert not triple.is_quadruple and quadruple.is_quadruple
    assert (quadruple.anchor_2, quadruple.votes, quadruple.where) == ("Good evening, madam.", 4, f"{benchmark}:3")
    predictions = tmp_path / "p.tsv"
    summary = score(str(benchmark), methods="punctuation", predictions=str(predictions))
    validated = summary["sets"]["validated"]
    assert (validated["instances"], validated["quadruples"]) == (2, 1)
    assert set(validated["methods"]["punctuation"]["components"]) == {"formality"}  # one component, not two
    assert {(r["ID"], r["component"]) for r in read_tsv(predictions)} == {("T-1", "formality"), ("Q-1", "formality")}


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        ([["0", "a", "b", "c", "d", "1", "X"]], HEADER[:7], r"bad\.tsv:1: missing column\(s\) 'style type'"),
        ([["0", "a", "b", "c", "d", "3", "X", "", "formality"]], HEADER, r"bad\.tsv:2: 'Correct Alternative' must be"),
        ([["0", "", "b", "c", "d", "1", "X", "", "formality"]], HEADER, r"bad\.tsv:2: column 'Anchor 1' is empty"),
        ([["0", "a", "b", "c", "d", "1", "X", "", "f"], ["1", "e", "f", "g", "h", "2", "X", "", "f"]], HEADER,
         r"bad\.tsv:3: duplicate ID 'X' \(it already appeared at .*bad\.tsv:2\)"),
        ([["0", "a", "b", "c", "d", "1", "X", "many", "formality"]], HEADER, r"bad\.tsv:2: '# Votes"),
        ([], HEADER, r"bad\.tsv: the file has a header but no instances"),
    ],
)
def test_malformed_benchmark_names_file_and_line(tmp_path, rows, header, message):
    benchmark = write_tsv(tmp_path / "bad.tsv", rows, header=header)
    error = score_fails(str(benchmark), methods="char3gram")
    assert re.search(message, error["message"]), error["message"]


def test_unknown_method_missing_model_and_bad_compare(shared_data, tmp_path):
    benchmark = str(shared_data / "stel" / "quad_questions_char_contraction.tsv")
    assert "unknown method 'bert'" in score_fails(benchmark, methods="char3gram,bert")["message"]
    error = score_fails(benchmark, methods=f"hf:{tmp_path / 'no-model'}")
    assert error["code"] == "model_not_found" and str(tmp_path / "no-model") in error["message"]
    assert "--compare" in score_fails(benchmark, methods="char3gram,uppercase", compare="char3gram,levenshtein")[
        "message"]
    assert "does not exist" in score_fails(str(tmp_path / "missing.tsv"), methods="char3gram")["message"]


@pytest.mark.slow  # a manage.py subprocess
def test_cli_exit_code_and_no_predictions_file_on_error(tmp_path):
    benchmark = write_tsv(tmp_path / "bad.tsv", [["0", "a", "b", "c", "d", "1", "X"]], header=HEADER[:7])
    predictions = tmp_path / "out.tsv"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    proc = subprocess.run(
        [sys.executable, "manage.py", "score_stel", str(benchmark), "--methods", "char3gram", "--predictions",
         str(predictions), "--json"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["ok"] is False and "missing column" in last["error"]["message"]
    assert not predictions.exists()
    assert list(tmp_path.iterdir()) == [benchmark]  # no temporary file left behind either


def test_a_jsonl_benchmark_row_is_checked_as_a_tsv_row_naming_its_line(tmp_path):
    good = {"anchor_1": "a", "anchor_2": "", "alternative_1_1": "b", "alternative_1_2": "c",
            "correct_alternative": 1, "id": "x1", "votes": None, "style_type": "formality"}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "x2", "correct_alternative": 3}) + "\n")
    with pytest.raises(ApplicationError, match=r"bench.jsonl:2: 'Correct Alternative' must be 1 or 2"):
        benchmark_read(path)
    path.write_text(json.dumps(good) + "\n")
    (record,) = benchmark_read(path)
    assert (record.id, record.anchor_1, record.correct, record.votes, record.is_quadruple) == ("x1", "a", 1, None,
                                                                                              False)
    ids_only = tmp_path / "ids.jsonl"
    ids_only.write_text(json.dumps({"id": "x1", "corpus": "c", "text_sha256": "0"}) + "\n")
    with pytest.raises(ApplicationError, match="ids-only export has no texts"):
        benchmark_read(ids_only)


# --- languages (issue 33) ------------------------------------------------------------------------------------------

FRENCH_ROWS = [
    ["0", "t'es où là ?", "Où êtes-vous en ce moment ?", "Pourriez-vous m'indiquer l'heure ?", "c koi l'heure ?",
     "2", "fr-1", "5", "formality"],
    ["1", "jsuis crevé mdr", "Je suis très fatigué.", "Je vous remercie de votre aide.", "merci bcp pr ton aide",
     "2", "fr-2", "5", "formality"],
]


def test_score_stel_refuses_an_english_only_method_on_a_french_benchmark(tmp_path):
    benchmark = write_tsv(tmp_path / "fr.tsv", FRENCH_ROWS)
    error = score_fails(str(benchmark), methods="char3gram,pos", language="fr")
    assert error["code"] == "unsupported_language"
    assert "method 'pos' supports en only" in error["message"] and "fr" in error["message"]
    for spec in ("st:minilm", "hf:minilm"):  # the packaged all-MiniLM-L6-v2 is English
        assert score_fails(str(benchmark), methods=spec, language="fr-CA")["code"] == "unsupported_language"
    summary = score(str(benchmark), methods="char3gram,punctuation,levenshtein,uppercase", language="fr")
    assert summary["ok"] is True and summary["sets"]["validated"]["instances"] == 2
    assert set(summary["sets"]["validated"]["methods"]) == {"char3gram", "punctuation", "levenshtein", "uppercase"}
    methods_language_check(specs=["pos", "st:minilm"], language="en-GB")  # English: both are fine (no error)
    methods_language_check(specs=["st:/models/paraphrase-multilingual-MiniLM-L12-v2"], language="fr")


def test_score_stel_lists_which_methods_are_language_independent():
    methods = {entry["name"]: entry for entry in score(list=True)["methods"]}
    assert methods["pos"]["languages"] == ["en"]
    assert all(methods[name]["languages"] == ["*"] for name in ("char3gram", "punctuation", "levenshtein"))
    assert methods["st:<model directory>"]["languages"] == ["*"] and "multilingual" in methods[
        "st:<model directory>"]["note"]


@pytest.mark.slow  # a fresh interpreter (a subprocess), where scikit-learn is not imported yet
def test_char3gram_seconds_exclude_the_one_time_start_up(shared_data):
    """`seconds` is the method's own work; scikit-learn's first import (char3gram's cosine needs it) is reported
    apart, as `startup_s`, and a second run in the same process has no start-up left."""
    stel = shared_data / "stel"
    files = [str(stel / "quad_questions_char_contraction.tsv"), str(stel / "quad_questions_char_substitution.tsv")]
    code = ("import json, sys, django; django.setup(); "
            "from scoring.model_scoring.services import stel_score; "
            "fresh = 'sklearn' not in sys.modules; "
            "runs = [stel_score(benchmark_paths=sys.argv[1:], methods='char3gram') for _ in range(2)]; "
            "print(json.dumps({'fresh': fresh, 'runs': [[r['seconds']['char3gram'], r['startup_s']['char3gram']] "
            "for r in runs]}))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    proc = subprocess.run([sys.executable, "-c", code, *files], cwd=settings.BASE_DIR, env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    (first, first_startup), (second, second_startup) = result["runs"]
    assert result["fresh"]  # Django's set-up did not import scikit-learn, so the first run starts it
    assert first_startup > 0.05  # scikit-learn's first import
    assert second_startup == 0.0  # nothing left to start
    assert first < first_startup  # the 400 instances' own work is not the import
    assert first < second + 0.25  # with the start-up left out, the first run's seconds are any run's
