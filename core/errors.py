"""The one error type services raise. The API turns it into JSON, commands into a non-zero exit."""
from __future__ import annotations

from typing import Any

from core.error_codes import INVALID


class ApplicationError(Exception):
    """A user-facing failure: `message` says what and where; `status` is the HTTP status the API answers.

    `message` is in plain words for every door (admin, API, command line): it names an input by its label
    ("Screening questions per batch: …"), never by a command-line flag. `field` names that input as the service's
    keyword (`screening_per_batch`); it goes into `details.field`, and a command maps it back to its own flag
    (core.commands.cli_message), so only the command line shows `--screening-per-batch`.
    """

    def __init__(self, message: str, *, code: str = INVALID, status: int = 400, details: Any = None,
                 headers: dict[str, str] | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.field = field
        if field is not None:
            details = {"field": field, **details} if isinstance(details, dict) else (
                {"field": field} if details is None else {"field": field, "errors": details})
        self.details = details
        self.headers = headers or {}  # e.g. Retry-After

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return body
