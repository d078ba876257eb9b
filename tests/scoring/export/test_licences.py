"""Licences travel with the text: recorded at import (the STEL and TurkCorpus importers know theirs, GYAFC's file
names get GYAFC's), refused exports of non-redistributable text with the ids-only form offered, the rebuild from
one's own copy checked row by row, and unknown licences refused at every door."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from core.models import Job
from scoring.models import BenchmarkExport
from tasks.licences import GYAFC
from tasks.models import Corpus
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import, corpus_licence_update
from tests.helpers import assert_api_error
from tests.scoring.export.test_services import run_command

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "corpora"


def gyafc_like_copy(folder: Path) -> list[Path]:
    """The project's own formal/informal sentences under GYAFC's file names (GYAFC itself may not be copied)."""
    folder.mkdir(parents=True, exist_ok=True)
    informal, formal = folder / "em_informal.ref0", folder / "em_formal"
    shutil.copy(FIXTURES / "formality_informal.txt", informal)
    shutil.copy(FIXTURES / "formality_formal.txt", formal)
    return [informal, formal]


def test_importers_record_their_licences(shared_data, tmp_path) -> None:
    stel, _ = corpus_import(name="stel", component=None, import_format="stel",
                            paths=[shared_data / "stel" / "quad_questions_char_contraction.tsv"])
    turk, _ = corpus_import(name="turk", component="simplicity", import_format="turkcorpus",
                            paths=[FIXTURES / "turkcorpus_sample.tsv"])
    gyafc, summary = corpus_import(name="gyafc-em", component="formality", import_format="aligned",
                                   paths=gyafc_like_copy(tmp_path / "copy"))
    own, _ = corpus_import(name="own", component="formality", import_format="aligned", licence="cc-by-4.0",
                           attribution="The StyleCrowd authors",
                           paths=[FIXTURES / "formality_informal.txt", FIXTURES / "formality_formal.txt"])
    assert (stel.licence, turk.licence, gyafc.licence, own.licence) == ("MIT", "GPL-3.0-only", GYAFC, "CC-BY-4.0")
    assert "Wegmann & Nguyen" in stel.attribution and "Xu, Napoles" in turk.attribution
    assert "Rao & Tetreault" in gyafc.attribution and summary["licence"] == GYAFC
    assert own.attribution == "The StyleCrowd authors"
    explicit, _ = corpus_import(name="stel-own", component=None, import_format="stel", licence="GPL-3.0-or-later",
                                paths=[shared_data / "stel" / "quad_questions_char_substitution.tsv"])
    assert explicit.licence == "GPL-3.0-or-later"  # the researcher's word wins over the format's


def test_unknown_licence_is_refused_at_every_door_and_nothing_is_stored(api, admin_client, tmp_path) -> None:
    paths = [str(FIXTURES / "formality_informal.txt"), str(FIXTURES / "formality_formal.txt")]
    out = io.StringIO()
    with pytest.raises(CommandError, match="unknown licence 'WTFPL-9'"):
        call_command("import_corpus", "--name", "x", "--component", "formality", "--format", "aligned",
                     "--licence", "WTFPL-9", *paths, stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1])["error"]["code"] == "unknown_licence"
    with open(paths[0], "rb") as one, open(paths[1], "rb") as two:
        response = api.post("/api/v1/corpora/", {"name": "x", "component": "formality", "format": "aligned",
                                                  "licence": "WTFPL-9", "style_1_file": one, "style_2_file": two},
                             format="multipart")
    assert_api_error(response, code="unknown_licence", status=400)
    with open(paths[0], "rb") as one, open(paths[1], "rb") as two:
        page = admin_client.post(reverse("admin:tasks_corpus_import"), {
            "name": "x", "component": "formality", "import_format": "aligned", "seed": 0, "licence": "WTFPL-9",
            "style_1_file": one, "style_2_file": two})
    assert page.status_code == 200 and b"WTFPL-9" in page.content  # the form names the bad choice
    assert not Corpus.objects.exists() and not Job.objects.exists()
    corpus, _ = corpus_import(name="own", component="formality", import_format="aligned", paths=paths)
    assert_api_error(api.patch(f"/api/v1/corpora/{corpus.pk}/", {"licence": "nope"}, format="json"),
                     code="unknown_licence", status=400)
    patched = api.patch(f"/api/v1/corpora/{corpus.pk}/", {"licence": "mit", "attribution": "us"}, format="json")
    assert patched.status_code == 200 and patched.json()["licence"] == "MIT"
    assert patched.json()["redistributable"] is True


@pytest.fixture
def gyafc_instances(tmp_path) -> Corpus:
    corpus, _ = corpus_import(name="gyafc-em", component="formality", import_format="aligned",
                              paths=gyafc_like_copy(tmp_path / "copy"))
    instances_generate(corpus=corpus, setup="quadruple", seed=1, count=30)
    instances_generate(corpus=corpus, setup="triple", seed=1, count=30)
    instances_generate(corpus=corpus, setup="style-or-content", seed=1, count=30)
    return corpus


def test_non_redistributable_text_is_refused_and_the_ids_only_form_rebuilds_it(gyafc_instances, tmp_path) -> None:
    out = tmp_path / "bench.tsv"
    for fmt in ("stel-tsv", "jsonl", "parquet", "hub"):
        stdout = io.StringIO()
        with pytest.raises(CommandError, match="does not allow redistribution") as refused:
            call_command("export_benchmark", "--format", fmt, "--corpus", "gyafc-em", "--out", str(out),
                         stdout=stdout)
        assert "ids-only" in str(refused.value) and "gyafc-em" in str(refused.value)
    assert not BenchmarkExport.objects.exists() and list(tmp_path.iterdir()) == [tmp_path / "copy"]
    with pytest.raises(CommandError, match="STEL TSV format holds the texts"):
        call_command("export_benchmark", "--format", "stel-tsv", "--ids-only", "--corpus", "gyafc-em", "--out",
                     str(out), stdout=io.StringIO())

    ids = tmp_path / "ids.jsonl"
    summary = run_command("export_benchmark", "--format", "jsonl", "--ids-only", "--corpus", "gyafc-em", "--out",
                          str(ids))
    assert summary["ids_only"] and summary["rows"] == 90 and summary["licences"] == [GYAFC]
    rows = [json.loads(line) for line in ids.read_text().splitlines()]
    texts = set(Corpus.objects.get(name="gyafc-em").pairs.values_list("text_1", flat=True))
    assert not any(value in texts for row in rows for value in row.values())  # no sentence leaves the server
    card = json.loads((tmp_path / "ids.card.json").read_text())
    assert card["licences"]["text_included"] is False and card["composition"]["texts_included"] is False
    recipe = "\n".join(card["licences"]["rebuild"])
    assert "import_corpus --name gyafc-em --component formality --format aligned" in recipe
    assert "em_informal.ref0 em_formal" in recipe and "rebuild_benchmark" in recipe and str(tmp_path) not in recipe

    # Someone else's copy, imported under another name, gives the texts back, every row checked.
    corpus_import(name="my-gyafc", component="formality", import_format="aligned",
                  paths=gyafc_like_copy(tmp_path / "theirs"))
    rebuilt = tmp_path / "rebuilt.tsv"
    done = run_command("rebuild_benchmark", str(ids), "--corpus", "gyafc-em=my-gyafc", "--out", str(rebuilt))
    assert done["rows"] == 90
    corpus_licence_update(corpus=Corpus.objects.get(name="gyafc-em"), licence="GPL-3.0-or-later")  # for the test
    full = tmp_path / "full.tsv"
    run_command("export_benchmark", "--format", "stel-tsv", "--corpus", "gyafc-em", "--out", str(full))
    assert rebuilt.read_bytes() == full.read_bytes()

    # A different copy (one sentence the benchmark uses changed) is caught, and nothing is written.
    used = json.loads(ids.read_text().splitlines()[0])["anchor_pair"]  # aligned files: the source id is the line
    changed = tmp_path / "changed"
    paths = gyafc_like_copy(changed)
    lines = paths[1].read_text().splitlines()
    lines[int(used) - 1] += " Indeed."
    paths[1].write_text("\n".join(lines) + "\n")
    corpus_import(name="changed-gyafc", component="formality", import_format="aligned", paths=paths)
    with pytest.raises(CommandError, match="rebuilt texts differ"):
        call_command("rebuild_benchmark", str(ids), "--corpus", "gyafc-em=changed-gyafc", "--out",
                     str(tmp_path / "bad.tsv"), stdout=io.StringIO())
    assert not (tmp_path / "bad.tsv").exists()


def test_mixed_export_refuses_then_ids_only_hub_through_the_api(gyafc_instances, shared_data, api, tmp_path,
                                                               settings) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus_import(name="stel-contraction", component=None, import_format="stel",
                  paths=[shared_data / "stel" / "quad_questions_char_contraction.tsv"])
    refused = api.post("/api/v1/exports/", {"format": "hub", "status": "all"}, format="json")
    assert_api_error(refused, code="not_redistributable", status=400)
    assert refused.json()["error"]["details"]["corpora"] == ["gyafc-em"] and not Job.objects.exists()
    started = api.post("/api/v1/exports/", {"format": "hub", "status": "all", "ids_only": True, "name": "mixed"},
                       format="json")
    assert started.status_code == 202, started.content
    from scoring.celery_tasks.export import benchmark_export_task

    benchmark_export_task(started.json()["job"]["id"])
    job = Job.objects.get()
    assert job.status == "done", job.error
    detail = api.get(f"/api/v1/exports/{job.result['export']}/").json()
    assert detail["ids_only"] and sorted(detail["licences"]) == sorted(["MIT", GYAFC])
    assert set(detail["downloads"]) == {"zip", "card", "card-md", "croissant"}
    readme = (Path(BenchmarkExport.objects.get().path) / "README.md").read_text()
    assert "license:\n- mit\n- other" in readme and f"license_name: {GYAFC}" in readme
    assert "The texts are not included" in readme
