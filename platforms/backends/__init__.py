"""The platform registry: one backend per platform, behind one interface (`backends/base.py`).

A platform is added by writing its client (`platforms/clients/`), its backend class here, and one entry in
`PLATFORM_BACKENDS` (dotted paths: a backend's module loads its SDK, e.g. boto3, only when the platform is used).
`mock` is a platform in process memory (no account anywhere, no network) for demos and tests."""
from __future__ import annotations

from django.utils.module_loading import import_string

from platforms.backends.base import PlatformBackend
from platforms.models import PlatformAccount

PLATFORM_BACKENDS: dict[str, str] = {
    "prolific": "platforms.backends.prolific.ProlificBackend",
    "mturk": "platforms.backends.mturk.MTurkBackend",
    "mock": "platforms.backends.mock.MockBackend",
}
# A study that names no platform of its own is published on this one's default account (PROLIFIC_API_TOKEN).
DEFAULT_PLATFORM = "prolific"


def backend_class(platform: str) -> type[PlatformBackend]:
    cls: type[PlatformBackend] = import_string(PLATFORM_BACKENDS[platform])
    return cls


def backend_for(account: PlatformAccount) -> PlatformBackend:
    backend: PlatformBackend = import_string(PLATFORM_BACKENDS[account.platform])(account)
    return backend


def people_platform(platform: str) -> str:
    """The annotation Participant.platform of the people a platform sends (the mock's arrive by anonymous link):
    the platform their person keys, erasure and retention are keyed by."""
    return backend_class(platform).PEOPLE if platform in PLATFORM_BACKENDS else platform


def platforms_of_people(people: str) -> list[str]:
    """The platforms whose people enter as `people` (the inverse of `people_platform`)."""
    return [name for name in PLATFORM_BACKENDS if people_platform(name) == people]
