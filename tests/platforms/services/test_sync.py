"""sync_published: with no study published on a platform there is nothing to sync."""
from __future__ import annotations

import pytest

from platforms.services.sync import sync_published

pytestmark = pytest.mark.django_db


def test_nothing_published_syncs_nothing():
    assert sync_published() == {"synced": 0, "failed": []}
