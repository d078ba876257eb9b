"""Rate limits on opening sessions, per client address and per study (settings.ANNOTATION_SESSION_RATES).

DRF's throttle interface (its rate syntax, its 429 with Retry-After) with the project's one client address
(`core.middleware.client_address`: DJANGO_TRUSTED_PROXY_COUNT trusted proxies, the address the login throttling
counts), counted as a fixed window with an atomic increment in the shared cache (Redis INCR in production):
DRF's own history-list throttles read and write back a list, so concurrent requests across gunicorn workers would
lose counts. At most N sessions are opened per address (or study) per window; a burst at a window's edge may get
up to 2N in two windows.

When the shared cache cannot be reached (Redis down or restarting) the limits fail open: the session is opened and a
warning is logged (at most once a minute per process). Nothing the study relies on lives in the cache: exactly k
answers per item and one session per participant id are database constraints, so an outage only lifts the brake
on how fast sessions may be opened, where refusing would turn every new participant away.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError
from rest_framework.throttling import SimpleRateThrottle

from core.middleware import client_address

logger = logging.getLogger(__name__)
OUTAGE_LOG_INTERVAL = 60.0
_last_outage_log = {"at": float("-inf")}


def _log_outage(scope: str, exc: BaseException) -> None:
    now = time.monotonic()
    if now - _last_outage_log["at"] < OUTAGE_LOG_INTERVAL:
        return
    _last_outage_log["at"] = now
    logger.warning("session rate limit (%s) not counted: the shared cache is unreachable (%s: %s); sessions are "
                   "opened without it until it is back", scope, type(exc).__name__, exc)


class SessionCreateThrottle(SimpleRateThrottle):
    """A fixed-window counter in the shared cache; subclasses name the scope and what is counted."""

    scope = ""

    def __init__(self) -> None:  # the rate is read per request, so settings overrides (tests) apply at once
        self.wait_seconds = 0.0

    def get_rate(self) -> str | None:
        return settings.ANNOTATION_SESSION_RATES.get(self.scope)

    def allow_request(self, request: Any, view: Any) -> bool:
        rate = self.get_rate()
        if not rate:
            return True
        limit, duration = self.parse_rate(rate)
        key = self.get_cache_key(request, view)
        now = time.time()
        window = int(now // duration)
        key = f"{key}:{window}"
        try:
            count = self._count(key, timeout=duration + 1)
        except (RedisError, OSError) as exc:  # fail open: see the module's docstring
            _log_outage(self.scope, exc)
            return True
        self.wait_seconds = (window + 1) * duration - now
        return count <= limit

    @staticmethod
    def _count(key: str, *, timeout: int) -> int:
        cache.add(key, 0, timeout=timeout)
        try:
            return cache.incr(key)
        except ValueError:  # the key expired between add and incr
            cache.set(key, 1, timeout=timeout)
            return 1

    def wait(self) -> float:
        return max(1.0, self.wait_seconds)


class SessionCreateAddressThrottle(SessionCreateThrottle):
    scope = "address"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return f"throttle:sessions:address:{client_address(request)}"


class SessionCreateStudyThrottle(SessionCreateThrottle):
    scope = "study"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return f"throttle:sessions:study:{view.kwargs.get('slug', '')}"
