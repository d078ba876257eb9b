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
