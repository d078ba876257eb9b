"""The Hugging Face folder and Croissant: `datasets` loads the folder offline, `mlcroissant` validates every export's
croissant.json and reads back exactly the exported rows; mixed licences are listed in the YAML and the card."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from core.models import Job
from scoring.celery_tasks.export import benchmark_export_task
from scoring.models import BenchmarkExport
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import
from tests.scoring.export.test_services import parsed_rows, run_command

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def stel_and_turk(shared_data: Path) -> None:
    """STEL's two published characteristic files (MIT) and TurkCorpus's test file (GPL-3.0), as imported."""
    for name in ("contraction", "substitution"):
        corpus_import(name=f"stel-{name}", component=None, import_format="stel",
                      paths=[shared_data / "stel" / f"quad_questions_char_{name}.tsv"])
    turk, _ = corpus_import(name="turk", component="simplicity", import_format="turkcorpus", seed=1,
                            paths=[shared_data / "turkcorpus" / "test.8turkers.organized.tsv"])
    instances_generate(corpus=turk, setup="quadruple", seed=1, count=40)


def croissant_records(path: Path) -> dict[str, list[dict]]:
    """Every record set of a croissant.json as mlcroissant reads it (field names without the record set)."""
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=str(path))
    assert not dataset.metadata.ctx.issues.errors, dataset.metadata.ctx.issues.report()
    out = {}
    for record_set in dataset.metadata.record_sets:
        rows = []
        for record in dataset.records(record_set.uuid):
            rows.append({key.split("/", 1)[1]: value.decode() if isinstance(value, bytes) else value
                         for key, value in record.items()})
        out[record_set.uuid] = rows
    return out


def test_hub_folder_loads_offline_with_datasets_and_croissant_reads_back_the_rows(
        stel_and_turk, tmp_path, monkeypatch) -> None:
    out = tmp_path / "hub"
    summary = run_command("export_benchmark", "--format", "hub", "--name", "stel-chars", "--out", str(out))
    assert summary["ok"] and summary["rows"] == 240 and summary["version"] == "1.0.0"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["README.md", "card.json", "croissant.json", "data/contraction/test.parquet",
                     "data/nbr_substitution/test.parquet", "data/simplicity/test.parquet"]

    readme = (out / "README.md").read_text()
    front = yaml.safe_load(readme.split("---\n")[1])
    assert front["license"] == ["gpl-3.0", "mit"] and front["language"] == ["en"]
    assert front["size_categories"] == ["n<1K"] and front["pretty_name"].startswith("stel-chars")
    configs = {c["config_name"]: c for c in front["configs"]}
    assert configs["all"]["default"] is True and set(configs) == {"all", "contraction", "nbr_substitution",
                                                                  "simplicity"}
    assert configs["contraction"]["data_files"] == [{"split": "test", "path": "data/contraction/test.parquet"}]
    assert "## Licences and attribution" in readme and "This benchmark mixes licences (GPL-3.0-only, MIT)" in readme

    # `datasets` reads the folder as the hub would, offline, into a cache of its own.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    from datasets import load_dataset

    contraction = load_dataset(str(out), "contraction", split="test", cache_dir=str(tmp_path / "hf-cache"))
    parquet = pq.read_table(out / "data/contraction/test.parquet").to_pylist()
    assert contraction.to_list() == parquet and len(parquet) == 100
    everything = load_dataset(str(out), split="test", cache_dir=str(tmp_path / "hf-cache"))  # the default config
    assert len(everything) == 240 and set(everything["style_type"]) == {"contraction", "nbr_substitution",
                                                                       "simplicity"}

    records = croissant_records(out / "croissant.json")
    for name in ("contraction", "nbr_substitution", "simplicity"):
        assert records[f"data-{name}-test"] == pq.read_table(out / f"data/{name}/test.parquet").to_pylist()
    croissant = json.loads((out / "croissant.json").read_text())
    assert croissant["rai:annotationsPerItem"] == "0" and croissant["version"] == "1.0.0"
    assert {"https://spdx.org/licenses/MIT.html", "https://spdx.org/licenses/GPL-3.0-only.html"} == set(
        croissant["license"])


def test_stel_votes_survive_the_hub_folder(shared_data, tmp_path) -> None:
    source = shared_data / "stel" / "quad_questions_char_contraction.tsv"
    corpus_import(name="stel-contraction", component=None, import_format="stel", paths=[source])
    out = tmp_path / "hub"
    run_command("export_benchmark", "--format", "hub", "--out", str(out))
    rows = pq.read_table(out / "data/contraction/test.parquet").to_pylist()
    published = {row[6]: row for row in parsed_rows(source)[1:]}
    assert [r["id"] for r in rows] == [row[6] for row in parsed_rows(source)[1:]]
    for row in rows:
        expected = published[row["id"]]
        assert [row["anchor_1"], row["anchor_2"], row["alternative_1_1"], row["alternative_1_2"]] == expected[1:5]
        assert row["correct_alternative"] == int(expected[5]) and row["setup"] == "quadruple"
        assert row["votes"] == (int(expected[7]) if expected[7] else None)


@pytest.mark.parametrize("fmt,suffix", [("stel-tsv", "tsv"), ("jsonl", "jsonl"), ("parquet", "parquet")])
def test_croissant_beside_every_file_export_reads_back_its_rows(stel_and_turk, tmp_path, fmt, suffix) -> None:
    out = tmp_path / f"bench.{suffix}"
    run_command("export_benchmark", "--format", fmt, "--corpus", "stel-contraction", "--out", str(out))
    records = croissant_records(tmp_path / "bench.croissant.json")
    assert list(records) == ["bench"]
    rows = records["bench"]
    if fmt == "stel-tsv":
        expected = [{"anchor_1": r[1], "anchor_2": r[2], "alternative_1_1": r[3], "alternative_1_2": r[4],
                     "correct_alternative": int(r[5]), "id": r[6], "votes": int(r[7]) if r[7] else None,
                     "style_type": r[8]} for r in parsed_rows(out)[1:]]
    elif fmt == "jsonl":
        expected = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        expected = pq.read_table(out).to_pylist()
    assert rows == expected and len(rows) == 100
    croissant = json.loads((tmp_path / "bench.croissant.json").read_text())
    assert croissant["distribution"][0]["sha256"] == BenchmarkExport.objects.get().sha256
    assert croissant["conformsTo"] == ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]


def test_admin_hub_export_job_page_renders_the_card_and_offers_the_zip(stel_and_turk, admin_client, tmp_path,
                                                                       settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    response = admin_client.post(reverse("admin:scoring_benchmarkexport_start"),
                                 {"format": "hub", "status": "all", "corpus": "turk", "name": "turk-bench"})
    job = Job.objects.get(kind="benchmark_export")
    assert response.status_code == 302
    benchmark_export_task(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    export = BenchmarkExport.objects.get(pk=job.result["export"])
    zip_url = reverse("admin:scoring_benchmarkexport_download", args=[export.pk, "zip"])
    assert zip_url in page and "<h2>Licences and attribution</h2>" in page and "GPL-3.0-only" in page
    assert "<table>" in page and export.path not in page  # the card rendered; never the server path
    archive = zipfile.ZipFile(io.BytesIO(b"".join(admin_client.get(zip_url).streaming_content)))
    names = sorted(archive.namelist())
    assert names == ["turk-bench/README.md", "turk-bench/card.json", "turk-bench/croissant.json",
                     "turk-bench/data/simplicity/test.parquet"]
    assert archive.read("turk-bench/data/simplicity/test.parquet") == (
        Path(export.path) / "data/simplicity/test.parquet").read_bytes()
    assert admin_client.get(reverse("admin:scoring_benchmarkexport_download", args=[export.pk, "data"])
                            ).status_code == 400  # a folder is downloaded as a zip


def test_hub_folder_refuses_a_folder_with_other_files_and_replaces_its_own(stel_and_turk, tmp_path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="folder with other files"):
        call_command("export_benchmark", "--format", "hub", "--corpus", "turk", "--out", str(out),
                     stdout=io.StringIO())
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] and not BenchmarkExport.objects.exists()
    fresh = tmp_path / "hub"
    run_command("export_benchmark", "--format", "hub", "--corpus", "turk", "--out", str(fresh))
    run_command("export_benchmark", "--format", "hub", "--corpus", "stel-contraction", "--out", str(fresh))
    assert sorted(p.name for p in (fresh / "data").iterdir()) == ["contraction"]  # the earlier folder replaced whole
    assert not list(tmp_path.glob(".hub*"))  # no staging folder left behind
