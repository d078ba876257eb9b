"""The platform registry: one backend per platform, behind one interface (`backends/base.py`).

A platform is added by writing its client (`platforms/clients/`), its backend class here, and one entry in
`PLATFORM_BACKENDS` (dotted paths: a backend's module loads its SDK, e.g. boto3, only when the platform is used)."""
from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from platforms.models import PlatformAccount

PLATFORM_BACKENDS: dict[str, str] = {
    "prolific": "platforms.backends.prolific.ProlificBackend",
    "mturk": "platforms.backends.mturk.MTurkBackend",
}


def backend_for(account: PlatformAccount) -> Any:
    return import_string(PLATFORM_BACKENDS[account.platform])(account)
