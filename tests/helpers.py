"""Assertions shared by every test package (fixtures live in tests/conftest.py)."""
from __future__ import annotations

from typing import Any


def assert_api_error(response: Any, *, code: str, status: int) -> dict[str, Any]:
    """The response is the documented API error (`core/errors.py`): `status`, JSON, and exactly
    `{"error": {"code": code, "message": "…", "details"?: …}}`. Returns the inner error object.

    Takes a Django/DRF test response or a `requests` response (the live-server tests)."""
    content = getattr(response, "content", b"")
    assert response.status_code == status, (response.status_code, content[:500])
    content_type = response.headers.get("Content-Type", "")
    assert content_type.startswith("application/json"), (content_type, content[:500])
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert {"code", "message"} <= set(error) <= {"code", "message", "details"}, body
    assert error["code"] == code, body
    assert isinstance(error["message"], str) and error["message"], body
    return error


def cuda_available() -> bool:
    """Whether torch sees a GPU; imported only when a test that asks is about to run (torch takes seconds to load,
    and `make test-fast` never runs the model tests), as the string condition `skipif("not cuda_available()")`."""
    import torch

    return torch.cuda.is_available()
