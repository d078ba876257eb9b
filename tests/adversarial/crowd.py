"""HTTP participants and bots for the adversarial tests: real requests against Django's live server (its own
thread, real PostgreSQL), each `requests.Session` one browser with its own cookie jar."""
from __future__ import annotations

import secrets
from typing import Any

import pytest
import requests

from annotation.selectors import reservation_expected_answer


def hex24() -> str:
    """A well-formed Prolific id (participant, study or session)."""
    return secrets.token_hex(12)


class Browser:
    """One participant's browser: a cookie jar, and optionally the address a trusted proxy reports for it."""

    def __init__(self, base_url: str, slug: str, *, address: str | None = None) -> None:
        self.base = base_url.rstrip("/") + "/api/v1/"
        self.slug = slug
        self.http = requests.Session()
        if address:
            self.http.headers["X-Forwarded-For"] = address
        self.token: str | None = None

    def open(self, **link: str) -> requests.Response:
        """POST sessions/ with the link's parameters (participant, platform, study_ref, session_ref, …)."""
        response = self.http.post(f"{self.base}studies/{self.slug}/sessions/", json=link, timeout=30)
        if response.status_code in (200, 201) and response.json().get("token"):
            self.token = response.json()["token"]
        return response

    def call(self, method: str, suffix: str, body: Any = None, token: str | None = None) -> requests.Response:
        return self.http.request(method, f"{self.base}sessions/{token or self.token}/{suffix}", json=body, timeout=30)

    def consent_and_start(self) -> dict[str, Any]:
        assert self.call("POST", "consent/", {"agree": True}).status_code == 200
        response = self.call("POST", "start/", {})
        assert response.status_code == 200, response.text
        return response.json()

    def answer_all(self, *, seconds: float | None = None) -> list[requests.Response]:
        """Answer every item correctly, as fast as the server answers; returns the answer responses."""
        answers = []
        while True:
            body = self.call("GET", "next/").json()
            if body["item"] is None:
                return answers
            item = body["item"]
            payload = {"item": item["id"], "answer": reservation_expected_answer(public_id=item["id"])}
            if seconds is not None:
                payload["seconds"] = seconds
            response = self.call("POST", "answers/", payload)
            assert response.status_code == 201, response.text
            answers.append(response)


@pytest.fixture
def rate_limits(settings: Any) -> Any:
    """Session-creation limits for one test, counted in a cache namespace of its own (Redis, as in production)."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{secrets.token_hex(6)}"}}

    def set_limits(*, address: str = "100000/min", study: str = "100000/min", proxies: int = 0) -> None:
        settings.ANNOTATION_SESSION_RATES = {"address": address, "study": study}
        settings.TRUSTED_PROXY_COUNT = proxies

    return set_limits
