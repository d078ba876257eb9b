"""Rating studies of rewrites: GYAFC's and Pauli et al.'s presets over a file of system outputs, filled by simulated
raters over the participant JSON API; agreement on the study equals agreement on the same ratings imported."""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation.models import Response, Study
from tests.annotation.helpers import run_participant

pytestmark = pytest.mark.django_db

DEMO = Path(settings.BASE_DIR) / "scoring" / "demo"


def _command(name: str, *args: str) -> dict[str, Any]:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _alpha(slug: str, question: str) -> float:
    summary = _command("compute_agreement", "--study", slug, "--question", question, "--resamples", "0", "--json")
    return summary["krippendorff_alpha"]


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_pauli_study_filled_by_raters_gives_the_alpha_of_the_imported_ratings():
    """The published-ratings check: the ratings file import_annotations reads (scoring/demo/, the format of Pauli et
    al.'s ratings) is replayed by three raters on a live study made with --preset pauli."""
    created = _command("create_study", "--slug", "pauli-live", "--kind", "likert", "--preset", "pauli",
                       "--outputs", str(DEMO / "likert_demo_items.jsonl"), "--eligibility", "none",
                       "--items-per-batch", "40", "--max-batches", "1")
    assert created["items"] == 40 and created["annotators_per_item"] == 3
    study = Study.objects.get(slug="pauli-live")
    assert [q["name"] for q in study.questions] == ["style_strength", "content_preservation"]
    assert all(q["level"] == "ordinal" and (q["min"], q["max"]) == (1, 5) for q in study.questions)

    ratings: dict[tuple[str, str, str], int] = {}
    with open(DEMO / "likert_demo_ratings.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            ratings[(row["annotator"], row["item"], row["question"])] = int(row["value"])
    raters = sorted({r for r, _, _ in ratings})
    for rater in raters:
        def answer(item: dict[str, Any], external_id: str, rater: str = rater) -> dict[str, int]:
            assert [q["name"] for q in item["questions"]] == ["style_strength", "content_preservation"]
            return {"style_strength": ratings[(rater, external_id, "style_change")],
                    "content_preservation": ratings[(rater, external_id, "content_preservation")]}
        assert run_participant(slug="pauli-live", pid=rater, answer_for=answer) == 40
    assert Response.objects.filter(study=study).count() == len(ratings) == 240

    _command("import_annotations", "--study", "pauli-imported", "--question", "content_preservation", "--scale",
             "1-5", "--level", "ordinal", str(DEMO / "likert_demo_ratings.csv"))
    live_content, imported_content = _alpha("pauli-live", "content_preservation"), _alpha("pauli-imported",
                                                                                           "content_preservation")
    live_style, imported_style = _alpha("pauli-live", "style_strength"), _alpha("pauli-imported", "style_change")
    assert live_content is not None and live_style is not None
    assert live_content == pytest.approx(imported_content, abs=1e-12)
    assert live_style == pytest.approx(imported_style, abs=1e-12)
    assert live_content == pytest.approx(0.768, abs=5e-4)  # the content alpha Pauli et al. report
    assert live_content != pytest.approx(live_style, abs=1e-3)  # two different questions, two different alphas

    metrics = _command("evaluate_metrics", "--study", "pauli-live", "--question", "content_preservation",
                       "--metrics", "chrf,levenshtein")
    assert metrics["ok"] and metrics["n_items"] == 40 and metrics["n_ratings"] == 120 and metrics["correlations"]


@pytest.mark.slow  # about a second: out of `make test-fast`
def test_gyafc_ranking_from_a_wide_outputs_file_reports_mean_rank_per_system(tmp_path):
    outputs = tmp_path / "outputs.tsv"
    sources = ["gonna be late lol", "thx for the help", "idk what u mean", "can u send it asap"]
    lines = ["id\tsource\tsysA\tsysB\tsysC"] + [
        f"s{i}\t{src}\tA says {src}\tB says {src}\tC says {src}" for i, src in enumerate(sources)]
    outputs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    created = _command("create_study", "--slug", "gyafc-rank", "--kind", "ranking", "--preset", "gyafc",
                       "--outputs", str(outputs), "--eligibility", "none", "--annotators-per-item", "3",
                       "--items-per-batch", "4", "--max-batches", "1")
    assert created["items"] == 4
    assert "Rank the" in Study.objects.get(slug="gyafc-rank").task_description
    preferences = {"r1": ["A", "B", "C"], "r2": ["A", "C", "B"], "r3": ["B", "A", "C"]}
    for rater, order in preferences.items():
        def answer(item: dict[str, Any], external_id: str, order: list[str] = order) -> list[str]:
            by_system = {o["text"].split(" ", 1)[0]: o["id"] for o in item["outputs"]}
            assert "system" not in json.dumps(item["outputs"])
            return [by_system[s] for s in order]
        assert run_participant(slug="gyafc-rank", pid=rater, answer_for=answer) == 4
    summary = _command("rank_systems", "--study", "gyafc-rank")
    ranks = {row["system"]: row["mean_rank"] for row in summary["systems"]}
    assert ranks == pytest.approx({"sysA": 4 / 3, "sysB": 2.0, "sysC": 8 / 3}, abs=1e-4)  # rounded to 4 places
    assert [row["system"] for row in summary["systems"]] == ["sysA", "sysB", "sysC"]
    assert all(row["judgments"] == 12 for row in summary["systems"]) and summary["judgments"] == 12
    assert summary["krippendorff_alpha_ordinal"] is not None and summary["krippendorff_alpha_ordinal"] < 1


def test_gyafc_likert_preset_makes_one_item_per_output_with_the_papers_scales(tmp_path):
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("".join(json.dumps({"id": f"s{i}", "source": f"hey {i}", "reference": f"Hello {i}.",
                                           "outputs": {"sysA": f"Hello there {i}.", "sysB": f"Greetings {i}."}}) + "\n"
                               for i in range(3)), encoding="utf-8")
    created = _command("create_study", "--slug", "gyafc-likert", "--kind", "likert", "--preset", "gyafc",
                       "--outputs", str(outputs), "--eligibility", "none")
    study = Study.objects.get(slug="gyafc-likert")
    assert created["items"] == 6 and study.annotators_per_item == 5
    questions = {q["name"]: q for q in study.questions}
    assert (questions["formality"]["min"], questions["formality"]["max"]) == (-3, 3)
    assert questions["formality"]["labels"]["-3"] == "Very Informal" and questions["formality"]["labels"]["3"] == \
        "Very Formal"
    assert questions["fluency"]["labels"]["1"] == "Other (fragment)" and questions["meaning"]["max"] == 6
    assert questions["meaning"]["labels"]["6"] == "Completely equivalent"
    assert all(q["level"] == "ordinal" for q in study.questions)
    item = study.items.get(external_id="s1:sysB")
    assert item.payload == {"source": "hey 1", "rewrite": "Greetings 1.", "system": "sysB", "reference": "Hello 1."}


@pytest.mark.parametrize(("args", "content", "message"), [
    (["--kind", "ranking", "--preset", "pauli"], "id\tsource\tA\tB\nx\ts\ta\tb\n", "has no ranking form"),
    (["--kind", "likert", "--preset", "nope"], "id\tsource\tA\nx\ts\ta\n", "Preset must be one of"),
    (["--kind", "ranking", "--preset", "gyafc"], "id\tsource\trewrite\nx\ts\ta\n", "a ranking needs at least 2"),
    (["--kind", "likert", "--preset", "gyafc"], "id\tsource\tA\nx\ts\ta\nx\tt\tb\n", "line 3: duplicate id 'x:A'"),
    (["--kind", "likert", "--preset", "gyafc"], "id\tsource\tA\nx\t\ta\n", "line 2: missing source"),
    (["--kind", "likert", "--preset", "gyafc", "--items", "x.jsonl"], "id\tsource\tA\nx\ts\ta\n", "not several"),
])
def test_bad_outputs_or_presets_are_refused_and_nothing_is_stored(tmp_path, args, content, message):
    path = tmp_path / "outputs.tsv"
    path.write_text(content, encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "bad", "--outputs", str(path), "--eligibility", "none", *args,
                     stdout=out, stderr=StringIO())
    last = json.loads(out.getvalue().strip().splitlines()[-1])
    assert last["ok"] is False and message in last["error"]["message"], last
    assert not Study.objects.filter(slug="bad").exists()
