"""The platform registry: one backend per platform, behind one interface (`backends/base.py`)."""
from __future__ import annotations

from typing import Any

from platforms.models import PlatformAccount


def backend_for(account: PlatformAccount) -> Any:
    from platforms.backends.mturk import MTurkBackend
    from platforms.backends.prolific import ProlificBackend

    registry = {"prolific": ProlificBackend, "mturk": MTurkBackend}
    return registry[account.platform](account)
