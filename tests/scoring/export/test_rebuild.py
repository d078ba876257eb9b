"""rebuild_benchmark (scoring/export/rebuild.py) writes the per-annotator votes table where the ids-only export had
one: beside its output as the export writes it (JSONL or Parquet; none beside STEL's TSV), with the same pseudonyms
(the export's salt, which the rebuild never needs), and refuses a card's table that is not there."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.core.management.base import CommandError

from core.pseudonyms import pseudonym
from tests.scoring.export.test_pseudonyms import RAW, _study
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db


def _export(study, out: Path, *extra: str) -> dict:
    return run_command("export_benchmark", "--format", out.suffix.lstrip("."), "--study", study.slug, "--out",
                       str(out), *extra)


def test_a_rebuild_writes_the_exports_votes_table_with_the_same_salted_pseudonyms(tmp_path: Path) -> None:
    study, _ = _study()
    _export(study, tmp_path / "ids.jsonl", "--ids-only", "--salt", "release-1")
    original = (tmp_path / "ids.annotator_votes.jsonl").read_bytes()
    _export(study, tmp_path / "full.jsonl", "--salt", "release-1")  # the same release with its texts

    done = run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--format", "jsonl", "--out",
                       str(tmp_path / "rebuilt.jsonl"))
    rebuilt = tmp_path / "rebuilt.annotator_votes.jsonl"
    assert done["annotator_votes"] == {"path": str(rebuilt), "rows": 15, "annotators": 5}
    assert rebuilt.read_bytes() == original == (tmp_path / "full.annotator_votes.jsonl").read_bytes()
    annotators = {json.loads(line)["annotator"] for line in rebuilt.read_text().splitlines()}
    assert annotators == {pseudonym(platform=p.platform, external_id=p.external_id, salt="release-1")
                          for p in study.participants.all()}
    assert not any(raw in rebuilt.read_text() for raw in RAW)

    # Parquet beside Parquet, the same rows; STEL's TSV gets none, and the summary says why
    run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--format", "parquet", "--out",
                str(tmp_path / "rebuilt.parquet"))
    rows = pq.read_table(tmp_path / "rebuilt.annotator_votes.parquet").to_pylist()
    assert rows == [json.loads(line) for line in original.decode().splitlines()]
    tsv = run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--out", str(tmp_path / "rebuilt.tsv"))
    assert tsv["annotator_votes"] is None and "15 rows" in tsv["annotator_votes_note"]
    assert not list(tmp_path.glob("rebuilt.annotator_votes.t*"))


def test_a_parquet_ids_export_rebuilds_its_table_too(tmp_path: Path) -> None:
    study, _ = _study()
    _export(study, tmp_path / "ids.parquet", "--ids-only")
    original = pq.read_table(tmp_path / "ids.annotator_votes.parquet").to_pylist()
    run_command("rebuild_benchmark", str(tmp_path / "ids.parquet"), "--format", "jsonl", "--out",
                str(tmp_path / "rebuilt.jsonl"))
    lines = (tmp_path / "rebuilt.annotator_votes.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == original and len(original) == 15


def test_no_table_where_the_export_had_none(tmp_path: Path) -> None:
    study, _ = _study()
    study.release_annotator_labels = False
    study.save()
    _export(study, tmp_path / "ids.jsonl", "--ids-only")
    assert not (tmp_path / "ids.annotator_votes.jsonl").exists()
    done = run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--format", "jsonl", "--out",
                       str(tmp_path / "rebuilt.jsonl"))
    assert done["annotator_votes"] is None and done["rows"] == 3
    assert not (tmp_path / "rebuilt.annotator_votes.jsonl").exists()


def test_a_table_the_card_names_but_is_missing_or_foreign_is_refused_before_writing(tmp_path: Path) -> None:
    study, _ = _study()
    _export(study, tmp_path / "ids.jsonl", "--ids-only")
    table = tmp_path / "ids.annotator_votes.jsonl"
    kept = table.read_text()
    table.unlink()
    with pytest.raises(CommandError, match="votes table .* is not beside the ids-only file"):
        run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--format", "jsonl", "--out",
                    str(tmp_path / "rebuilt.jsonl"))
    assert not (tmp_path / "rebuilt.jsonl").exists()
    stranger = json.loads(kept.splitlines()[0]) | {"id": "QQ_not-in-this-export"}
    table.write_text(kept + json.dumps(stranger) + "\n")
    with pytest.raises(CommandError, match="the table of another export"):
        run_command("rebuild_benchmark", str(tmp_path / "ids.jsonl"), "--format", "jsonl", "--out",
                    str(tmp_path / "rebuilt.jsonl"))
    assert not (tmp_path / "rebuilt.jsonl").exists()
