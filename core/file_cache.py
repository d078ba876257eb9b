"""Rendered images kept as files under MEDIA_ROOT/cache/: drawn once (when a computation finishes, or on the
first view), then served from disk. The key names the record and the time it was computed, so a recomputation
draws afresh."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings


def cached_bytes(*, key: str, render: Callable[[], bytes]) -> bytes:
    path = Path(settings.MEDIA_ROOT) / "cache" / key
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    body = render()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(body)
    os.replace(tmp, path)  # never half a file under the final name
    return body
