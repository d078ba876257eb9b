"""Components created from the CLI (`import_corpus --create-component`) and the API, so every STEL file imports."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from tasks.models import Corpus, StyleComponent, TaskInstance

pytestmark = pytest.mark.django_db


def new_characteristic_file(shared_data: Path, tmp_path: Path, *, break_line: int | None = None) -> Path:
    """STEL's published contraction instances relabelled as a characteristic StyleCrowd does not know ('emotives',
    style tags emo/plain), as STEL's newer characteristic files look."""
    text = (shared_data / "stel" / "quad_questions_char_contraction.tsv").read_text("utf-8")
    lines = text.replace("ction-", "emo-").replace("wiki-", "plain-").replace("\tcontraction", "\temotives")
    lines = lines.splitlines()
    if break_line is not None:
        lines[break_line] = lines[break_line].replace("\t1\t", "\t7\t", 1).replace("\t2\t", "\t7\t", 1)
    path = tmp_path / "quad_questions_char_emotives.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def command(*args: str) -> dict:
    out = StringIO()
    call_command("import_corpus", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_unknown_component_fails_until_created_from_the_cli(shared_data: Path, tmp_path: Path) -> None:
    path = new_characteristic_file(shared_data, tmp_path)
    with pytest.raises(CommandError, match="unknown style component 'emotives'"):
        command("--name", "emo", "--format", "stel", str(path))
    summary = command("--name", "emo", "--format", "stel", "--create-component", "--component-description",
                      "Emotive markers (STEL characteristic)", str(path))
    assert summary["component"] == "emotives" and summary["instances"] == 100
    component = StyleComponent.objects.get(name="emotives")
    assert (component.label_1, component.label_2, component.kind) == ("emo", "plain", "characteristic")
    assert component.description == "Emotive markers (STEL characteristic)"
    # the styles of every instance are read from the new component's tags in the IDs
    assert not TaskInstance.objects.filter(corpus__name="emo", metadata__styles_from_id=False).exists()
    # an existing component is reused, not created twice
    again = command("--name", "emo-2", "--format", "stel", "--create-component", str(path))
    assert again["component"] == "emotives" and StyleComponent.objects.filter(name="emotives").count() == 1


def test_failed_import_leaves_no_component_behind(shared_data: Path, tmp_path: Path) -> None:
    path = new_characteristic_file(shared_data, tmp_path, break_line=5)
    with pytest.raises(CommandError, match="line 6"):
        command("--name", "emo", "--format", "stel", "--create-component", str(path))
    assert not StyleComponent.objects.filter(name="emotives").exists() and not Corpus.objects.exists()


def test_create_component_for_pair_formats_with_labels(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("I am so happy!!! :)\nThat was great!!\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("I am happy.\nThat was good.\n", encoding="utf-8")
    summary = command("--name", "emph", "--component", "emphasis", "--format", "aligned", "--create-component",
                      "--component-labels", "emphatic,plain", "--component-kind", "dimension",
                      str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert summary["pairs"] == 2
    component = StyleComponent.objects.get(name="emphasis")
    assert (component.label_1, component.label_2, component.kind) == ("emphatic", "plain", "dimension")
    with pytest.raises(CommandError, match="two different"):
        command("--name", "x", "--component", "other", "--format", "aligned", "--create-component",
                "--component-labels", "same,same", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert not StyleComponent.objects.filter(name="other").exists()


def test_api_creates_components_with_json_errors(api: APIClient) -> None:
    created = api.post("/api/v1/components/", {"name": "emotives", "label_1": "emo", "label_2": "plain",
                                               "kind": "characteristic", "description": "Emotives"}, format="json")
    assert created.status_code == 201 and created.json()["name"] == "emotives"
    assert StyleComponent.objects.get(name="emotives").description == "Emotives"
    duplicate = api.post("/api/v1/components/", {"name": "emotives", "label_1": "a", "label_2": "b"}, format="json")
    assert duplicate.status_code in (400, 409) and "error" in duplicate.json()
    same = api.post("/api/v1/components/", {"name": "x", "label_1": "a", "label_2": "a"}, format="json")
    assert same.status_code == 400 and "error" in same.json() and not StyleComponent.objects.filter(name="x").exists()
    assert APIClient().post("/api/v1/components/", {"name": "y", "label_1": "a", "label_2": "b"}).status_code in (
        401, 403)
