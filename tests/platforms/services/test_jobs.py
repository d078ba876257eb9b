"""platform_job_start: checks what it can before queueing (the kind, the study)."""
from __future__ import annotations

import pytest

from core.errors import ApplicationError
from core.models import Job
from platforms.services.jobs import platform_job_start

pytestmark = pytest.mark.django_db


def test_an_unknown_kind_or_study_is_refused_and_nothing_is_queued():
    with pytest.raises(ApplicationError, match="kind"):
        platform_job_start(kind="platform_nothing", study_slug="s", params={})
    with pytest.raises(ApplicationError):
        platform_job_start(kind="platform_sync", study_slug="no-such-study", params={})
    assert not Job.objects.exists()
