from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

SHARED_DATA = Path(settings.SHARED_DATA_DIR)
REPO_ROOT = Path(settings.BASE_DIR)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        raise RuntimeError(f"shared data not found at {SHARED_DATA}; set STYLECROWD_SHARED_DATA")
    return SHARED_DATA


@pytest.fixture
def artifacts_dir() -> Path:
    path = REPO_ROOT / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every transactional test restores the database it found (serialized rollback).

    The STEL components come from a data migration. A transactional test flushes the tables afterwards; without
    serialized rollback the components would be gone for later tests, and mixing tests with and without it makes
    Django re-create content types that the serialized snapshot then inserts a second time.
    """
    for item in items:
        marker = item.get_closest_marker("django_db")
        transactional = (marker is not None and marker.kwargs.get("transaction")) or any(
            name in getattr(item, "fixturenames", ()) for name in ("transactional_db", "live_server")
        )
        if not transactional:
            continue
        kwargs = dict(marker.kwargs) if marker is not None else {}
        if kwargs.get("serialized_rollback"):
            continue
        kwargs.update(transaction=True, serialized_rollback=True)
        item.add_marker(pytest.mark.django_db(*(marker.args if marker else ()), **kwargs), append=False)
