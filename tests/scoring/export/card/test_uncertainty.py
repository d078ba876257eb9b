"""The per-item uncertainty everywhere the benchmark goes: STEL's published counts (the pooled model, said so) in
JSONL, Parquet, the hub folder, Croissant (validated and read back with mlcroissant) and the card's section."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from scoring.agreement.uncertainty import MODEL_POOLED, pooled_uncertainty
from tasks.services.imports import corpus_import
from tests.scoring.export.test_hub import croissant_records
from tests.scoring.export.test_services import parsed_rows, run_command

pytestmark = pytest.mark.django_db

# STEL's simplicity counts (benchmarks/data/stel_published_votes.json) scaled to 100 instances
VOTES = [0] * 6 + [1] * 8 + [2] * 18 + [3] * 27 + [4] * 25 + [5] * 16


def stel_file_with_votes(shared_data: Path, tmp_path: Path) -> Path:
    """STEL's published contraction file, unchanged but for its votes column (empty there: the characteristics
    were not annotated), filled with STEL's published simplicity distribution."""
    rows = parsed_rows(shared_data / "stel" / "quad_questions_char_contraction.tsv")
    for row, votes in zip(rows[1:], VOTES, strict=True):
        row[7] = str(votes)
    path = tmp_path / "quad_with_votes.tsv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter="\t", lineterminator="\n").writerows(rows)
    return path


def test_count_only_votes_get_the_pooled_model_in_every_format(shared_data: Path, tmp_path: Path) -> None:
    corpus, _ = corpus_import(name="stel-votes", component=None, import_format="stel",
                              paths=[stel_file_with_votes(shared_data, tmp_path)])
    expected = pooled_uncertainty(items=np.arange(100), n_correct=np.asarray(VOTES), n_votes=np.full(100, 5))
    p_of = dict(zip(VOTES, expected.per_item["p_correct"], strict=True))
    out = tmp_path / "bench.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus.name, "--out", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 100
    for record in records:
        assert record["uncertainty_model"] == MODEL_POOLED
        assert record["p_correct"] == pytest.approx(p_of[record["votes"]])
        assert record["p_correct_low"] <= record["p_correct"] <= record["p_correct_high"]
    card = json.loads((tmp_path / "bench.card.json").read_text())["uncertainty"]
    assert card["available"] and card["models"] == [MODEL_POOLED]
    wrong = round(sum(1 - r["p_correct"] for r in records), 2)
    assert card["overall"]["expected_wrong_gold_labels"] == pytest.approx(wrong, abs=0.01)
    assert sum(card["overall"]["histogram"].values()) == 100
    markdown = (tmp_path / "bench.card.md").read_text()
    assert f"Expected wrong gold labels: {wrong:.1f}" in markdown and "Histogram of p_correct" in markdown
    assert "pooled one-coin (count-only" in markdown

    # the same rows in STEL's TSV keep exactly STEL's columns
    tsv = tmp_path / "bench.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--corpus", corpus.name, "--out", str(tsv))
    assert all(len(row) == 9 for row in parsed_rows(tsv))


@pytest.mark.slow  # mlcroissant and the hub folder: seconds
def test_hub_folder_and_croissant_carry_the_uncertainty(shared_data: Path, tmp_path: Path) -> None:
    corpus, _ = corpus_import(name="stel-votes", component=None, import_format="stel",
                              paths=[stel_file_with_votes(shared_data, tmp_path)])
    out = tmp_path / "hub"
    run_command("export_benchmark", "--format", "hub", "--corpus", corpus.name, "--out", str(out))
    rows = pq.read_table(out / "data/contraction/test.parquet").to_pylist()
    assert {r["uncertainty_model"] for r in rows} == {MODEL_POOLED}
    assert all(r["p_correct"] is not None for r in rows)
    records = croissant_records(out / "croissant.json")  # validates, then reads every record set
    assert records["data-contraction-test"] == rows
    croissant = json.loads((out / "croissant.json").read_text())
    fields = {f["name"]: f for rs in croissant["recordSet"] for f in rs["field"]}
    assert fields["p_correct"]["dataType"] == "sc:Float" and "uncertainty_model" in fields
    assert any("expected wrong gold labels" in line for line in croissant["rai:dataAnnotationAnalysis"])
    readme = (out / "README.md").read_text()
    assert "Per-item uncertainty" in readme and "Expected wrong gold labels" in readme


def test_ids_only_form_carries_the_uncertainty_and_the_rebuild_gives_the_full_export(shared_data: Path,
                                                                                      tmp_path: Path) -> None:
    corpus, _ = corpus_import(name="stel-votes", component=None, import_format="stel",
                              paths=[stel_file_with_votes(shared_data, tmp_path)])
    ids, full = tmp_path / "ids.jsonl", tmp_path / "full.jsonl"
    run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus.name, "--ids-only", "--out", str(ids))
    run_command("export_benchmark", "--format", "jsonl", "--corpus", corpus.name, "--out", str(full))
    rows = [json.loads(line) for line in ids.read_text().splitlines()]
    assert all(r["uncertainty_model"] == MODEL_POOLED and r["p_correct"] is not None for r in rows)
    rebuilt = tmp_path / "rebuilt.jsonl"
    run_command("rebuild_benchmark", str(ids), "--format", "jsonl", "--out", str(rebuilt))
    assert rebuilt.read_bytes() == full.read_bytes()
