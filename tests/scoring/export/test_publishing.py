"""publish_benchmark through huggingface_hub against a local fake of the hub (HF_ENDPOINT), never the real one: the
folder arrives byte for byte (Parquet through LFS), a row records each publication, and a missing token, a refused
token, a rate limit, a server error and no answer each end in a clear state."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.models import BenchmarkExport, BenchmarkPublication
from tests.factories import TaskInstanceFactory
from tests.scoring.export.test_services import run_command
from tests.scoring.fake_hub import FakeHub

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def hub_export(shared_data, tmp_path) -> BenchmarkExport:
    from tasks.services.imports import corpus_import

    corpus_import(name="stel-contraction", component=None, import_format="stel",
                  paths=[shared_data / "stel" / "quad_questions_char_contraction.tsv"])
    run_command("export_benchmark", "--format", "hub", "--name", "stel-contraction", "--out", str(tmp_path / "hub"))
    return BenchmarkExport.objects.get()


@pytest.fixture
def fake_hub(monkeypatch, settings):
    from huggingface_hub import constants

    settings.STYLECROWD_HUB_TIMEOUT_SECONDS = 1
    # The fake speaks the hub's LFS protocol; the Xet storage protocol (hf_xet's chunked CAS uploads) is the
    # library's own business past this boundary.
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    with FakeHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
        yield hub


def publish(*args: str) -> dict:
    out = io.StringIO()
    try:
        call_command("publish_benchmark", "--to", "huggingface", *args, stdout=out)
    finally:
        publish.last = json.loads(out.getvalue().strip().splitlines()[-1])
    return publish.last


def test_publish_uploads_the_folder_byte_for_byte(hub_export, fake_hub) -> None:
    summary = publish("--repo", "stylecrowd/stel-contraction")
    folder = Path(hub_export.path)
    local = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert fake_hub.files["stylecrowd/stel-contraction"] == local
    assert fake_hub.repos["stylecrowd/stel-contraction"]["type"] == "dataset"
    assert ("PUT", f"/lfs-upload/{hub_export.files[0]['sha256']}") in fake_hub.requests  # Parquet went through LFS
    assert set(fake_hub.validated) == {local["README.md"].decode()}  # the hub's check of the card's YAML passed
    assert fake_hub.commits[0]["summary"] == f"stel-contraction 1.0.0 (StyleCrowd export #{hub_export.pk})"
    publication = BenchmarkPublication.objects.get()
    assert publication.state == "done" and publication.commit_url == summary["url"] and publication.commit_oid
    assert summary["ok"] and summary["endpoint"] == fake_hub.url
    again = publish("--repo", "stylecrowd/stel-contraction", "--export", str(hub_export.pk))  # the repo exists: ok
    assert again["ok"] and len(fake_hub.commits) == 2


def test_publish_without_a_token_writes_nothing(hub_export, fake_hub, monkeypatch) -> None:
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(CommandError, match="No Hugging Face token: set HF_TOKEN"):
        publish("--repo", "stylecrowd/x")
    assert publish.last["error"]["code"] == "missing_token"
    assert fake_hub.requests == [] and not BenchmarkPublication.objects.exists()


@pytest.mark.parametrize("failure,code,state", [
    ({"token": "wrong"}, "hub_unauthorized", None),
    ({"create": 429}, "hub_rate_limited", None),
    ({"commit": 500}, "hub_error", "failed"),
    ({"commit": "hang"}, "hub_outcome_unknown", "unknown"),
])
def test_hub_failures_end_in_a_clear_state(hub_export, fake_hub, monkeypatch, failure, code, state) -> None:
    if "token" in failure:
        monkeypatch.setenv("HF_TOKEN", failure["token"])
    else:
        fake_hub.fail.update(failure)
    with pytest.raises(CommandError):
        publish("--repo", "stylecrowd/stel-contraction")
    assert publish.last["error"]["code"] == code
    publication = BenchmarkPublication.objects.get()
    assert publication.state == (state or "failed") and publication.error
    assert not fake_hub.files.get("stylecrowd/stel-contraction")  # nothing committed
    if state == "unknown":
        assert "Look at the repository before publishing again" in publication.error


def test_publish_refuses_what_must_not_leave(fake_hub, tmp_path) -> None:
    TaskInstanceFactory()  # a corpus without a recorded licence
    run_command("export_benchmark", "--format", "hub", "--out", str(tmp_path / "hub"))
    with pytest.raises(CommandError, match="without a recorded licence"):
        publish("--repo", "stylecrowd/x")
    run_command("export_benchmark", "--format", "jsonl", "--out", str(tmp_path / "b.jsonl"))
    jsonl = BenchmarkExport.objects.get(format="jsonl")
    with pytest.raises(CommandError, match="publish a hub export"):
        publish("--repo", "stylecrowd/x", "--export", str(jsonl.pk))
    with pytest.raises(CommandError, match="must be ORG/NAME"):
        publish("--repo", "no-slash")
    assert fake_hub.requests == [] and not BenchmarkPublication.objects.exists()
