"""The one error a platform call raises, saying what is known about the call's effect.

- `refused`: the platform answered and did nothing (a 4xx, a 429): safe to send again later, by a person.
- `not_sent`: the request never reached the platform (no connection): nothing happened.
- `unknown`: the request may have reached the platform and its answer was lost (a timeout or reset after sending,
  a 5xx): whatever the call does may or may not have happened. Never sent again automatically.
"""
from __future__ import annotations

from typing import Any

from core.errors import ApplicationError
from platforms.error_codes import PLATFORM_ERROR

REFUSED, NOT_SENT, UNKNOWN = "refused", "not_sent", "unknown"


class PlatformCallError(ApplicationError):
    def __init__(self, message: str, *, outcome: str, code: str = PLATFORM_ERROR, status: int = 502,
                 platform_status: int | None = None, retry_after: float | None = None,
                 body: Any = None) -> None:
        headers = {"Retry-After": str(int(retry_after))} if retry_after else None
        super().__init__(message, code=code, status=status, headers=headers,
                         details={"outcome": outcome, **({"platform_status": platform_status}
                                                         if platform_status else {})})
        self.outcome = outcome
        self.platform_status = platform_status
        self.retry_after = retry_after
        self.body = body

    @property
    def unknown(self) -> bool:
        return self.outcome == UNKNOWN
