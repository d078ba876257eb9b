"""API authentication: DRF's Basic auth under django-axes' login throttling (settings.AXES_*)."""
from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' check before the password backends. Every login over HTTP (the admin's form, DRF's Basic auth)
    passes its request; a call without one is in-process code (a shell, the test client's `login()`), which has no
    address to count, so it is left to the next backend instead of being refused as axes does."""

    def authenticate(self, request: Any = None, username: str | None = None, password: str | None = None,
                     **kwargs: Any) -> Any:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class LoginLocked(exceptions.Throttled):
    default_code = "login_locked"


class LockoutBasicAuthentication(BasicAuthentication):
    """DRF's Basic auth under django-axes' login throttling: a locked-out address gets a 429 (with Retry-After)
    instead of the 403 of a wrong password. Axes flags the request it was given, which here is DRF's Request."""

    def authenticate_credentials(self, userid: str, password: str, request: Any = None) -> Any:
        if "\x00" in userid or "\x00" in password:
            # No account has a NUL in its name, and PostgreSQL cannot store one in the failed-login record that
            # axes writes: refuse here as any wrong credentials are refused, before anything is stored.
            raise exceptions.AuthenticationFailed("Invalid username/password.")
        try:
            return super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            if request is not None and getattr(request, "axes_locked_out", False):
                wait = int(settings.AXES_COOLOFF_TIME.total_seconds())
                raise LoginLocked(wait=wait, detail=f"Too many failed login attempts; try again in {wait // 60} "
                                                    "minutes.") from None
            raise


class LockoutBasicScheme(OpenApiAuthenticationExtension):
    """The OpenAPI schema shows it as the plain HTTP Basic scheme it is."""

    target_class = LockoutBasicAuthentication
    name = "basicAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "basic"}
