"""upload_size_check: an import's files together are held to STYLECROWD_UPLOAD_MAX_MB (413 above it); each line of
an upload to STYLECROWD_MAX_LINE_BYTES (400 naming the file and the line)."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import ApplicationError
from core.models import Job
from tasks.models import Corpus
from tasks.services.uploads import upload_size_check


def test_files_under_the_limit_pass_and_over_it_are_refused_with_413(settings):
    settings.STYLECROWD_UPLOAD_MAX_MB = 1
    half = SimpleUploadedFile("a.txt", b"x" * (512 * 1024))
    upload_size_check(files=[half])
    with pytest.raises(ApplicationError) as refused:
        upload_size_check(files=[half, SimpleUploadedFile("b.txt", b"x" * (600 * 1024))])
    assert refused.value.status == 413


TEN_MB = 10 * 1024 * 1024


@pytest.mark.django_db
def test_a_10_mb_line_is_refused_at_the_door_naming_the_file_and_line(api, settings, tmp_path):  # noqa: ANN001
    """The API's corpus upload: a 400 naming the file as uploaded and its line, no job, no saved file."""
    settings.MEDIA_ROOT = str(tmp_path)
    settings.STYLECROWD_UPLOAD_MAX_MB = 50
    formal = b"A formal sentence.\nAnother one.\n" + b"x" * TEN_MB + b"\nlast\n"
    informal = b"an informal one\nanother\nthird\nlast\n"
    response = api.post("/api/v1/corpora/", {
        "name": "long", "component": "formality", "format": "aligned",
        "style_1_file": SimpleUploadedFile("informal.txt", informal),
        "style_2_file": SimpleUploadedFile("formal.txt", formal)}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "line_too_long" and error["message"].startswith("formal.txt, line 3: longer than")
    assert not Job.objects.exists() and not Corpus.objects.exists()
    assert not any(Path(tmp_path, "uploads").rglob("*.txt"))


def test_the_command_line_reader_names_the_file_and_line_too(tmp_path, settings):
    from tasks.services.parsers import read_text

    settings.STYLECROWD_MAX_LINE_BYTES = 1000
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"short\n" * 4 + b"y" * 1001 + b"\n")
    with pytest.raises(ApplicationError) as refused:
        read_text(path)
    assert refused.value.code == "line_too_long" and f"{path}, line 5:" in refused.value.message
    path.write_bytes(b"short\n" * 4 + b"y" * 1000 + b"\n")  # exactly the limit passes
    assert read_text(path).count("\n") == 5
