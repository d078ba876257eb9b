"""DRF glue: ApplicationError and DRF's own errors become `{"error": {"code", "message", "details"}}`."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.error_codes import ERROR, INVALID
from core.errors import ApplicationError


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
