"""upload_size_check: an import's files together are held to STYLECROWD_UPLOAD_MAX_MB (413 above it)."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import ApplicationError
from tasks.services.uploads import upload_size_check


def test_files_under_the_limit_pass_and_over_it_are_refused_with_413(settings):
    settings.STYLECROWD_UPLOAD_MAX_MB = 1
    half = SimpleUploadedFile("a.txt", b"x" * (512 * 1024))
    upload_size_check(files=[half])
    with pytest.raises(ApplicationError) as refused:
        upload_size_check(files=[half, SimpleUploadedFile("b.txt", b"x" * (600 * 1024))])
    assert refused.value.status == 413
