"""The one error type services raise. The API turns it into JSON, commands into a non-zero exit."""
from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A user-facing failure: `message` says what and where; `status` is the HTTP status the API answers."""

    def __init__(self, message: str, *, code: str = "invalid", status: int = 400, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.details = details
        self.headers = headers or {}  # e.g. Retry-After

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body
