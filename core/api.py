"""DRF glue: ApplicationError and DRF's own errors become `{"error": {"code", "message", "details"}}`."""
from __future__ import annotations

import io
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.error_codes import ERROR, INVALID
from core.errors import ApplicationError
from core.parsers import StrictJSONParser


def _flatten(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{key}: {_flatten(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(item) for item in detail)
    return str(detail)


# DRF messages that quote the request (a header, the method) get a fixed text instead: errors never echo input.
FIXED_MESSAGES: dict[type, str] = {
    exceptions.UnsupportedMediaType: "Unsupported media type: send application/json.",
    exceptions.MethodNotAllowed: "Method not allowed on this endpoint.",
    exceptions.NotAcceptable: "Cannot answer in the requested format: accept application/json.",
}
MAX_JSON_DEPTH = 32


class ParticipantJSONParser(StrictJSONParser):
    """JSON bodies of the participant endpoints: too deep a nesting is a 400 (json's recursion would be a 500)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        raw = stream.read() if stream is not None else b""
        if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _nesting(raw) > MAX_JSON_DEPTH:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.")
        try:
            return super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.") from None


def _nesting(raw: bytes) -> int:
    """The deepest [ / { nesting outside JSON strings (the body is small: the participant limit bounds it)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response({"error": exc.as_dict()}, status=exc.status, headers=exc.headers or None)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "Permission denied.")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    fixed = FIXED_MESSAGES.get(type(exc))
    detail = fixed if fixed else getattr(exc, "detail", response.data)
    code = exc.get_codes() if isinstance(exc, exceptions.APIException) else ERROR
    if not isinstance(code, str):
        code = INVALID
    body: dict[str, Any] = {"code": code, "message": _flatten(detail)}
    if isinstance(detail, (dict, list)):
        body["details"] = detail
    response.data = {"error": body}
    return response
