"""Benchmark exports name annotators by keyed pseudonyms only: the per-annotator votes table (JSONL, Parquet, the hub
folder), its Croissant record set and the card hold no platform id; salts re-key, from every door (the command, the
API, the admin form), and are never stored (the export's params say `salted`); studies that do not publish
per-annotator labels give no table, and the card says so."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from annotation.models import Participant
from core.errors import ApplicationError
from core.models import Job
from core.pseudonyms import is_pseudonym, pseudonym
from scoring.celery_tasks.export import benchmark_export_task
from scoring.export.jobs import export_execute
from scoring.models import BenchmarkExport
from tests.factories import annotated_study
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db

RAW = ["PROLIFICqq81Zx", "A2MTURKZZ9W", "anon-q9x7", "PROLIFICkk12Yy", "A9MTURKYY3V"]


def _study():
    study, items = annotated_study(answers=[["S2-S1"] * 5, ["S2-S1"] * 3 + ["S1-S2"] * 2, ["S1-S2"] * 5])
    for person, raw in zip(study.participants.order_by("external_id"), RAW, strict=True):
        person.external_id = raw
        person.platform = "mturk" if "MTURK" in raw else "anonymous" if raw.startswith("anon") else "prolific"
        person.save()
    return study, items


def _all_text(path: Path) -> str:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    siblings = list(path.parent.glob(f"{path.stem}.*")) if path.is_file() else []
    text = ""
    for f in {*files, *siblings}:
        text += pq.read_table(f).to_pandas().to_json() if f.suffix == ".parquet" else f.read_text(encoding="utf-8")
    return text


def _assert_no_raw(text: str) -> None:
    for raw in RAW:
        assert raw not in text


def test_votes_table_in_every_format_holds_pseudonyms_only(tmp_path: Path) -> None:
    study, _ = _study()
    expected = {pseudonym(platform=p.platform, external_id=p.external_id) for p in study.participants.all()}
    tables = {}
    for fmt, name in (("jsonl", "b.jsonl"), ("parquet", "b.parquet"), ("hub", "hubdir")):
        out = tmp_path / name
        run_command("export_benchmark", "--format", fmt, "--study", study.slug, "--out", str(out))
        _assert_no_raw(_all_text(out))
        if fmt == "jsonl":
            votes = [json.loads(line) for line in (tmp_path / "b.annotator_votes.jsonl").read_text().splitlines()]
        else:
            path = tmp_path / ("b.annotator_votes.parquet" if fmt == "parquet"
                               else "hubdir/data/annotator_votes/train.parquet")
            votes = pq.read_table(path).to_pylist()
        assert len(votes) == 15 and {v["annotator"] for v in votes} == expected
        assert all(is_pseudonym(v["annotator"]) for v in votes)
        assert sum(v["correct"] for v in votes) == 5 + 3 + 0
        tables[fmt] = votes
    assert tables["jsonl"] == tables["parquet"] == tables["hub"]
    card = json.loads((tmp_path / "hubdir" / "card.json").read_text())
    assert card["annotators"]["annotator_votes"]["published"] is True
    croissant = json.loads((tmp_path / "hubdir" / "croissant.json").read_text())
    votes_set = next(r for r in croissant["recordSet"] if "annotator_votes" in r["@id"])
    assert {f["name"] for f in votes_set["field"]} == {"id", "corpus", "study", "annotator", "answer", "correct"}
    readme = (tmp_path / "hubdir" / "README.md").read_text()
    assert "config_name: annotator_votes" in readme and "Per-annotator labels: published" in readme


def test_salts_re_key_the_annotators(tmp_path: Path) -> None:
    study, _ = _study()

    def annotators(salt: str, name: str) -> list[str]:
        args = ["export_benchmark", "--format", "jsonl", "--study", study.slug, "--out", str(tmp_path / name)]
        run_command(*args, *(["--salt", salt] if salt else []))
        stem = name.rsplit(".", 1)[0]
        lines = (tmp_path / f"{stem}.annotator_votes.jsonl").read_text().splitlines()
        return [json.loads(line)["annotator"] for line in lines]

    plain, first, again, other = (annotators("", "a.jsonl"), annotators("r1", "b.jsonl"), annotators("r1", "c.jsonl"),
                                  annotators("r2", "d.jsonl"))
    assert first == again  # same id, same pseudonym within a release
    assert len(set(first)) == 5
    assert not set(first) & set(other) and not set(first) & set(plain)
    card = json.loads((tmp_path / "b.card.json").read_text())
    assert "salted" in card["annotators"]["identifiers"] and "r1" not in json.dumps(card)


def test_no_table_where_the_study_does_not_publish_annotator_labels(tmp_path: Path) -> None:
    study, _ = _study()
    study.release_annotator_labels = False
    study.save()
    out = tmp_path / "b.parquet"
    run_command("export_benchmark", "--format", "parquet", "--study", study.slug, "--out", str(out))
    assert not (tmp_path / "b.annotator_votes.parquet").exists()
    card = json.loads((tmp_path / "b.card.json").read_text())
    assert card["annotators"]["annotator_votes"]["published"] is False
    assert "not published" in (tmp_path / "b.card.md").read_text()


def test_card_demographics_are_k_anonymous(tmp_path: Path) -> None:
    study, _ = _study()
    people = list(Participant.objects.filter(study=study).order_by("pk"))
    for n, person in enumerate(people):
        person.persona = {"age": "25-34" if n < 4 else "65+", "gender": "woman"}
        person.save()
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--out", str(tmp_path / "b.jsonl"))
    card = json.loads((tmp_path / "b.card.json").read_text())
    # k = 5: four share one age and one is alone; the lone age becomes "other", and the five share a gender.
    demographics = card["collection"]["studies"][0]["demographics"]
    assert all(n >= 5 for values in demographics.values() for n in values.values())
    summary = card["annotators"]["k_anonymity"]["studies"][study.slug]
    assert summary["k"] == 5 and summary["generalised"] + summary["withheld"] == 5


def _votes_annotators(path: Path) -> list[str]:
    return [json.loads(line)["annotator"] for line in path.read_text().splitlines()]


def _assert_salt_stored_nowhere(salt: str) -> None:
    """Neither the job row nor the export's row holds the salt; both say that one was used."""
    job = Job.objects.get(kind="benchmark_export")
    export = BenchmarkExport.objects.get(pk=job.result["export"])
    assert "salt" not in job.params and job.params["salted"] is True
    assert "salt" not in export.params and export.params["salted"] is True
    for row in (job.params, job.result, export.params, export.files, export.counts):
        assert salt not in json.dumps(row)
    card = Path(export.card_path).read_text(encoding="utf-8")
    assert salt not in card and "--salt SALT" in card


def test_the_api_door_takes_the_release_salt_and_keeps_only_that_one_was_used(tmp_path: Path, settings, api) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _study()
    salt = "release-salt-7Qx"
    started = api.post("/api/v1/exports/", {"format": "jsonl", "status": "all", "study": study.slug, "salt": salt},
                       format="json")
    assert started.status_code == 202, started.content
    assert salt not in started.content.decode()
    job = Job.objects.get(pk=started.json()["job"]["id"])
    assert job.params["salt"] == salt  # for the worker, until it has run
    benchmark_export_task(job.pk)
    _assert_salt_stored_nowhere(salt)
    export = BenchmarkExport.objects.get()
    assert salt not in api.get(f"/api/v1/exports/{export.pk}/").content.decode()
    # the same pseudonyms as the command with the same salt, none of the unsalted ones
    run_command("export_benchmark", "--format", "jsonl", "--study", study.slug, "--salt", salt,
                "--out", str(tmp_path / "cli.jsonl"))
    via_api = _votes_annotators(Path(export.path).with_name(f"{Path(export.path).stem}.annotator_votes.jsonl"))
    assert via_api == _votes_annotators(tmp_path / "cli.annotator_votes.jsonl")
    raw = {(p.platform, p.external_id) for p in study.participants.all()}
    assert set(via_api) == {pseudonym(platform=p, external_id=i, salt=salt) for p, i in raw}
    assert not set(via_api) & {pseudonym(platform=p, external_id=i) for p, i in raw}


def test_the_admin_door_takes_the_release_salt(admin_client, tmp_path: Path, settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _study()
    salt = "admin-salt-Z91"
    form = admin_client.get(reverse("admin:scoring_benchmarkexport_start"))
    assert b'name="salt"' in form.content
    response = admin_client.post(reverse("admin:scoring_benchmarkexport_start"),
                                 {"format": "jsonl", "status": "all", "study": study.slug, "salt": salt})
    assert response.status_code == 302
    benchmark_export_task(Job.objects.get(kind="benchmark_export").pk)
    _assert_salt_stored_nowhere(salt)
    export = BenchmarkExport.objects.get()
    votes = _votes_annotators(Path(export.path).with_name(f"{Path(export.path).stem}.annotator_votes.jsonl"))
    assert set(votes) == {pseudonym(platform=p.platform, external_id=p.external_id, salt=salt)
                          for p in study.participants.all()}
    page = admin_client.get(reverse("admin:scoring_benchmarkexport_change", args=[export.pk])).content.decode()
    assert salt not in page


def test_a_salted_job_that_lost_its_salt_is_refused_not_written_unsalted(tmp_path: Path, settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _study()
    job = Job.objects.create(kind="benchmark_export", params={
        "format": "jsonl", "status": "all", "study": study.slug, "name": "", "ids_only": False, "salted": True})
    with pytest.raises(ApplicationError) as refused:
        export_execute(job=job)
    assert refused.value.code == "salt_missing"
    assert not BenchmarkExport.objects.exists()


def test_a_failed_salted_job_does_not_keep_the_salt(tmp_path: Path, settings, api, monkeypatch) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    study, _ = _study()
    started = api.post("/api/v1/exports/", {"format": "jsonl", "status": "all", "study": study.slug,
                                            "salt": "lost-salt-4"}, format="json")
    job = Job.objects.get(pk=started.json()["job"]["id"])

    def broken(**kwargs):
        raise ApplicationError("disk full")

    monkeypatch.setattr("scoring.export.jobs.benchmark_export", broken)
    with pytest.raises(ApplicationError):
        export_execute(job=job)
    job.refresh_from_db()
    assert "salt" not in job.params and job.params["salted"] is True
