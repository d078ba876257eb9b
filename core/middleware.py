"""HTTP-level guards: participant body limits, JSON error pages for the API, the login lock-out answer.

Everything here answers in the documented error shape `{"error": {"code", "message", "details"?}}` and never puts
any part of the request (body, path, parameters) into the answer.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from core.error_codes import BAD_REQUEST, LENGTH_REQUIRED, LOGIN_LOCKED, NOT_FOUND, SERVER_ERROR, TOO_LARGE

# The participant JSON API and the /s/<slug>/ entry page: no login, so the first thing anyone on the internet reaches.
PARTICIPANT_PATH = re.compile(r"^/(?:api/v1/(?:sessions/|studies/[^/]*/sessions/)|s/)")
API_PATH = re.compile(r"^/api/")


def error_response(*, status: int, code: str, message: str, details: Any = None) -> JsonResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return JsonResponse({"error": body}, status=status)


def is_participant_path(path: str) -> bool:
    return bool(PARTICIPANT_PATH.match(path))


class ParticipantGuardMiddleware:
    """Refuses an oversized participant body from its Content-Length header, before anything reads it.

    Django reads as many bytes as Content-Length announces, so the header check bounds what a participant request can
    make the server read and parse; a body without a length (chunked) is refused outright."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_participant_path(request.path_info):
            refused = self._refuse_body(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    @staticmethod
    def _refuse_body(request: HttpRequest) -> HttpResponse | None:
        if request.META.get("HTTP_TRANSFER_ENCODING"):
            # A chunked body has no length to check first, and a server that terminates the input (gunicorn) lets
            # Django read it to the end: refused unread. Browsers and HTTP clients send JSON with a Content-Length.
            return error_response(status=411, code=LENGTH_REQUIRED,
                                  message="Send the body with a Content-Length header (no chunked transfer).")
        raw = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(raw)
        except ValueError:
            return error_response(status=400, code=BAD_REQUEST, message="The Content-Length header is not a number.")
        if length < 0:
            return error_response(status=400, code=BAD_REQUEST, message="The Content-Length header is negative.")
        limit = settings.PARTICIPANT_MAX_BODY_BYTES
        if length > limit:
            return error_response(
                status=413, code=TOO_LARGE, message=f"The request body is larger than {limit} bytes.",
                details={"max_bytes": limit},
            )
        return None


# --- error pages (config/urls.py's handler400/404/500): JSON under /api/, Django's HTML pages elsewhere ------------


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if API_PATH.match(request.path_info):
        return error_response(status=400, code=BAD_REQUEST, message="The request could not be understood.")
    return defaults.bad_request(request, exception)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if API_PATH.match(request.path_info):
        return error_response(status=404, code=NOT_FOUND, message="Not found.")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if API_PATH.match(request.path_info):
        return error_response(status=500, code=SERVER_ERROR,
                              message="The server failed to handle this request; please try again.")
    return defaults.server_error(request)


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR; behind TRUSTED_PROXY_COUNT proxies that each append to X-Forwarded-For,
    the address the outermost of them saw (entries further left are whatever the client sent, so never trusted)."""
    hops = settings.TRUSTED_PROXY_COUNT
    if hops > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "")


def login_lockout_response(request: HttpRequest, credentials: Any = None, *args: Any, **kwargs: Any) -> HttpResponse:
    """django-axes' answer once an address has too many failed logins (AXES_LOCKOUT_CALLABLE)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    message = f"Too many failed login attempts; try again in {minutes} minutes."
    if API_PATH.match(request.path_info):
        response: HttpResponse = error_response(status=429, code=LOGIN_LOCKED, message=message)
    else:
        response = HttpResponse(f"<!doctype html><title>Locked</title><h1>Locked</h1><p>{message}</p>", status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response
