"""export_benchmark: STEL TSV exactly (round trip of the published files), JSONL, Parquet, votes, dataset cards."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.models import BenchmarkExport
from tasks.services.imports import corpus_import
from tests.factories import TaskInstanceFactory, annotated_study

pytestmark = pytest.mark.django_db

STEL_HEADER = ("\tAnchor 1\tAnchor 2\tAlternative 1.1\tAlternative 1.2\tCorrect Alternative\tID\t"
               "# Votes out of 5 for Correct Alternative\tstyle type")


def run_command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def parsed_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter="\t"))


@pytest.mark.parametrize("name", ["quad_questions_char_contraction.tsv", "quad_questions_char_substitution.tsv"])
def test_stel_round_trip_is_byte_identical(shared_data: Path, tmp_path: Path, name: str) -> None:
    source = shared_data / "stel" / name
    corpus, _ = corpus_import(name="published", component=None, import_format="stel", paths=[source])
    out = tmp_path / "export.tsv"
    summary = run_command("export_benchmark", "--format", "stel-tsv", "--corpus", corpus.name, "--out", str(out))
    assert summary["rows"] == 100
    assert out.read_text(encoding="utf-8").split("\n", 1)[0] == STEL_HEADER
    assert parsed_rows(out) == parsed_rows(source)
    assert out.read_bytes() == source.read_bytes()


def test_candidate_export_leaves_votes_empty_and_orders_rows(tmp_path: Path) -> None:
    later = TaskInstanceFactory(corpus__name="b-corpus", position=1, correct_order="S1-S2")
    first = TaskInstanceFactory(corpus__name="a-corpus", position=5, setup="triple", anchor_2="")
    second = TaskInstanceFactory(corpus=later.corpus, position=0)
    out = tmp_path / "candidates.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--status", "candidate", "--out", str(out))
    rows = parsed_rows(out)
    assert rows[0] == STEL_HEADER.split("\t")
    assert [r[6] for r in rows[1:]] == [first.stel_id, second.stel_id, later.stel_id]  # corpus, setup, position
    assert [r[0] for r in rows[1:]] == ["0", "1", "2"]
    assert [r[7] for r in rows[1:]] == ["", "", ""]
    assert rows[1][2] == "" and rows[3][5] == "1" and rows[2][5] == "2"  # triple: no Anchor 2; 1 = S1-S2


def _validated_study() -> tuple:
    study, items = annotated_study(answers=[["S2-S1"] * 5, ["S2-S1"] * 3 + ["S1-S2"] * 2, ["S1-S2"] * 5,
                                            ["S2-S1"] * 4 + ["S1-S2"]])
    run_command("filter_instances", "--study", study.slug, "--seed", "3")
    return study, items


def test_validated_export_fills_votes_in_all_formats(tmp_path: Path) -> None:
    study, items = _validated_study()
    TaskInstanceFactory()  # an unannotated candidate elsewhere: not exported
    outputs = {}
    for fmt, suffix in (("stel-tsv", "tsv"), ("jsonl", "jsonl"), ("parquet", "parquet")):
        out = tmp_path / f"bench.{suffix}"
        summary = run_command("export_benchmark", "--format", fmt, "--status", "validated", "--study", study.slug,
                              "--out", str(out))
        assert summary["rows"] == 3 and summary["votes_from_annotations"] == 3
        outputs[fmt] = out
    tsv = parsed_rows(outputs["stel-tsv"])[1:]
    assert [(r[6], r[7]) for r in tsv] == [(items[0].external_id, "5"), (items[1].external_id, "3"),
                                           (items[3].external_id, "4")]
    records = [json.loads(line) for line in outputs["jsonl"].read_text().splitlines()]
    assert list(records[0]) == ["index", "anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2",
                                "correct_alternative", "id", "votes", "style_type", "p_correct", "p_correct_low",
                                "p_correct_high", "uncertainty_model"]
    assert [(r["id"], r["votes"], r["correct_alternative"]) for r in records] == [
        (r[6], int(r[7]), int(r[5])) for r in tsv]
    # The per-item uncertainty: a probability inside its interval, from the one-coin model over the annotators;
    # 5 of 5 right is surer than 4 of 5, which is surer than 3 of 5. STEL's TSV keeps STEL's columns only.
    for record in records:
        assert 0.0 <= record["p_correct_low"] <= record["p_correct"] <= record["p_correct_high"] <= 1.0
        assert record["uncertainty_model"] == "one-coin Dawid-Skene over annotators"
    by_votes = {r["votes"]: r["p_correct"] for r in records}
    assert by_votes[5] > by_votes[4] > by_votes[3]
    assert len(tsv[0]) == 9
    table = pq.read_table(outputs["parquet"]).to_pylist()
    assert table == records


def test_reexports_are_byte_identical_and_cards_reproduce_them(tmp_path: Path) -> None:
    study, _ = _validated_study()
    for fmt in ("stel-tsv", "jsonl", "parquet"):
        out = tmp_path / f"bench-{fmt}.data"
        run_command("export_benchmark", "--format", fmt, "--status", "validated", "--study", study.slug,
                    "--out", str(out))
        first = out.read_bytes()
        card = json.loads((tmp_path / f"bench-{fmt}.card.json").read_text())
        # The card's command reproduces the file byte for byte.
        args = shlex.split(card["command"])
        assert args[:3] == ["python", "manage.py", "export_benchmark"] and args[-2:] == ["--out", out.name]
        run_command(*args[2:-1], str(out))
        assert out.read_bytes() == first
        assert card["sha256"] == hashlib.sha256(first).hexdigest()
    assert BenchmarkExport.objects.count() == 6


def test_dataset_card_contents(tmp_path: Path) -> None:
    study, _ = _validated_study()
    out = tmp_path / "bench.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--status", "validated", "--study", study.slug,
                "--out", str(out))
    card = json.loads((tmp_path / "bench.card.json").read_text())
    assert card["counts"]["per_component"] == {"formality": 3}
    assert card["filter"]["rule"] == "validated when at least 3 of the first 5 valid responses are correct"
    assert card["filter"]["seed"] == 3 and card["seed"] == 3
    assert card["agreement"]["fleiss_kappa"] is not None and card["agreement"]["krippendorff_alpha"] is not None
    assert card["sources"][0]["corpus"] and "licence" in card["sources"][0]
    assert card["created_at"]
    markdown = (tmp_path / "bench.card.md").read_text()
    Path("/tmp/card_sample.md").write_text(markdown)
    assert "Licences and attribution" in markdown and "export_benchmark" in markdown and "formality | 3" in markdown
    export = BenchmarkExport.objects.get()
    assert export.path == str(out.resolve()) and export.card_path.endswith("bench.card.json")
    assert export.format == "stel-tsv" and export.filter_run is not None


def test_export_errors_store_nothing(tmp_path: Path) -> None:
    TaskInstanceFactory()
    cases = [
        (["--corpus", "nope"], "does not exist"),
        (["--status", "validated"], "no task instances match"),
        (["--study", "missing"], "does not exist"),
        (["--setup", "pentuple"], "setup 'pentuple'"),
    ]
    for extra, message in cases:
        with pytest.raises(CommandError, match=message):
            call_command("export_benchmark", "--format", "jsonl", *extra, "--out", str(tmp_path / "x.jsonl"),
                         stdout=io.StringIO())
    with pytest.raises(CommandError, match="is a directory"):
        call_command("export_benchmark", "--format", "jsonl", "--out", str(tmp_path), stdout=io.StringIO())
    assert not BenchmarkExport.objects.exists()
    assert list(tmp_path.iterdir()) == []


def test_published_stel_instances_annotated_filtered_and_exported_with_votes(shared_data: Path, tmp_path: Path) -> None:
    """STEL's real contraction sample → a study over its 100 instances → 5 responses each → filter → validated
    export: same header and texts as the published file, votes filled with the correct votes among the first 5."""
    import datetime as dt

    from annotation.models import Participant, Response, StudyItem
    from tests.factories import StudyFactory

    source = shared_data / "stel" / "quad_questions_char_contraction.tsv"
    corpus, _ = corpus_import(name="stel-contraction", component=None, import_format="stel", paths=[source])
    study = StudyFactory(slug="stel-reannotation")
    people = [Participant.objects.create(study=study, platform="prolific", external_id=f"R{j}") for j in range(5)]
    expected_votes = {}
    base = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    for index, instance in enumerate(corpus.instances.order_by("position")):
        item = StudyItem.objects.create(study=study, instance=instance, external_id=instance.stel_id, position=index,
                                        kind="quadruple", component=instance.component, family=instance.family,
                                        correct_answer=instance.correct_order)
        n_correct = index % 6  # 0…5 correct votes, cycling
        wrong = "S1-S2" if instance.correct_order == "S2-S1" else "S2-S1"
        for rater, person in enumerate(people):
            answer = instance.correct_order if rater < n_correct else wrong
            Response.objects.create(study=study, participant=person, study_item=item, answer=answer,
                                    is_correct=answer == instance.correct_order,
                                    answered_at=base + dt.timedelta(minutes=index * 5 + rater))
        expected_votes[instance.stel_id] = n_correct
    summary = run_command("filter_instances", "--study", study.slug)
    assert summary["validated"] == sum(1 for v in expected_votes.values() if v >= 3)
    out = tmp_path / "validated.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--status", "validated", "--study", study.slug,
                "--out", str(out))
    exported = parsed_rows(out)
    published = {row[6]: row for row in parsed_rows(source)[1:]}
    assert exported[0] == parsed_rows(source)[0]
    assert len(exported) - 1 == summary["validated"]
    for row in exported[1:]:
        assert row[1:7] == published[row[6]][1:7] and row[8] == "contraction"
        assert int(row[7]) == expected_votes[row[6]] >= 3


def test_the_export_formats_are_listed_once() -> None:
    """The registry is the list of formats: the database's choices, the export and rebuild commands follow it."""
    from scoring.export.formats import EXPORT_FORMATS, FILE_FORMATS
    from scoring.management.commands.export_benchmark import Command as ExportCommand
    from scoring.management.commands.rebuild_benchmark import Command as RebuildCommand
    from scoring.models import BenchmarkExport

    assert list(BenchmarkExport.Format.values) == list(EXPORT_FORMATS)
    assert FILE_FORMATS == tuple(name for name, spec in EXPORT_FORMATS.items() if not spec.folder)

    def choices(command: type, option: str) -> list[str]:
        parser = command().create_parser("manage.py", "x")
        return next(list(action.choices) for action in parser._actions if option in action.option_strings)

    assert choices(ExportCommand, "--format") == list(EXPORT_FORMATS)
    assert choices(RebuildCommand, "--format") == list(FILE_FORMATS) == ["stel-tsv", "jsonl", "parquet"]


def test_withdrawn_instances_leave_every_export_all_included(tmp_path: Path) -> None:
    from tasks.models import TaskInstance

    study, items = _validated_study()
    TaskInstance.objects.filter(pk=items[0].instance_id).update(status="withdrawn")
    for status, rows in (("validated", 2), ("all", 3)):
        out = tmp_path / f"{status}.jsonl"
        summary = run_command("export_benchmark", "--format", "jsonl", "--status", status, "--study", study.slug,
                              "--out", str(out))
        ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
        assert summary["rows"] == rows == len(ids) and items[0].external_id not in ids


def test_the_cards_intervals_are_labelled_as_the_filter_runs_own_bootstrap(tmp_path: Path, admin_client) -> None:
    """The card's 95% CIs come from the filter run's bootstrap, the dashboard's from the agreement run's: each says
    which bootstrap it is (before: two different intervals, both just "95% CI")."""
    from django.urls import reverse

    from scoring.agreement.runs import agreement_run_compute, agreement_run_start

    study, _ = _validated_study()
    out = tmp_path / "bench.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--status", "validated", "--study", study.slug,
                "--out", str(out))
    card = json.loads((tmp_path / "bench.card.json").read_text())
    filter_run = BenchmarkExport.objects.get().filter_run
    assert card["agreement"]["bootstrap_seed"] == 3 and card["agreement"]["fleiss_kappa_ci"]["resamples"] == 200
    said = " ".join((tmp_path / "bench.card.md").read_text().split())
    assert (f"95% CIs: percentile bootstrap over items drawn by filter run #{filter_run.pk} (200 resamples, seed 3);"
            " a separate bootstrap from the agreement dashboard's") in said
    run = agreement_run_compute(run_id=agreement_run_start(study=study, seed=7, resamples=60, enqueue=False).pk)
    page = admin_client.get(reverse("admin:scoring_agreement_dashboard", args=[run.pk])).content.decode()
    note = " ".join(page.split('id="interval-note">', 1)[1].split("</p>", 1)[0].split())
    assert "this agreement run's own percentile bootstrap over items (60 resamples, seed 7)" in note
    assert "A dataset card quotes the bootstrap of the filter run behind its export, drawn separately" in note
