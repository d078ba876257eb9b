"""A fake Prolific: a real HTTP server (threads, a random port) that keeps studies, submissions, bonuses, groups,
messages and hooks the way Prolific's API describes them.

Every request it receives and every response it sends is validated against Prolific's own API description
(`../shared/data/platforms/prolific/publicapi.yaml`, with openapi-core): a request Prolific would refuse is answered
400 here *and* recorded in `violations`, which the `fake_prolific` fixture asserts empty, so a body Prolific would
refuse fails a test. Beyond the description it enforces what Prolific's documentation says in words (a rejection
message of at least 100 characters, bonus ids that took part in the study).

Faults on demand (`fail`): 429 with Retry-After, 5xx, and a timeout after the call was recorded (the fake does what
the call asks, then answers too late for the client), or a connection closed without an answer."""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.platforms.prolific_behaviour import ProlificBehaviour, hexid, now_iso

_SPEC = None
_SPEC_LOCK = threading.Lock()


def spec() -> Any:
    """Prolific's description, loaded once (its own schema validation off: the file has a few quirks). One quirk is
    mended: a filter-list item is `oneOf` four shapes that overlap (a detailed select filter is a plain one with more
    optional fields), so no item could match exactly one; it is read as `anyOf` (each item still has to match one)."""
    global _SPEC
    with _SPEC_LOCK:
        if _SPEC is None:
            import yaml
            from django.conf import settings
            from openapi_core import Config, OpenAPI

            path = Path(settings.SHARED_DATA_DIR) / "platforms" / "prolific" / "publicapi.yaml"
            described = yaml.safe_load(path.read_text(encoding="utf-8"))
            item = described["components"]["schemas"]["FilterListResultsItem"]
            item["anyOf"] = item.pop("oneOf")
            _SPEC = OpenAPI.from_dict(described, config=Config(spec_validator_cls=None))
    return _SPEC


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    kind: str  # "429" | "500" | "timeout_after" | "timeout_before" | "reset_after"
    times: int = 1
    retry_after: float = 1


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    status: int = 0
    at: float = field(default_factory=time.time)


class FakeProlific(ProlificBehaviour):
    """State and behaviour; `url` is where it listens. `token` is the only token it accepts."""

    def __init__(self, *, token: str = "fake-token-" + "x" * 20, page_size_max: int = 2,
                 answer_delay: float = 2.0, settings: Any = None, fault_timeout: float = 1.0) -> None:
        self.token = token
        self.page_size_max = page_size_max   # smaller than any client asks for: lists come in several pages
        self.answer_delay = answer_delay     # how late a "timeout_after" answer comes (the client gives up first)
        # The client's timeout is generous (a loaded CI machine answers slowly); a test that injects a timeout gets a
        # short one, through pytest-django's settings fixture (restored after the test).
        self.settings = settings
        self.fault_timeout = fault_timeout
        self.user = {"id": hexid(), "email": "researcher@example.org"}
        self.workspace_id = hexid()
        self.studies: dict[str, dict[str, Any]] = {}
        self.submissions: dict[str, dict[str, Any]] = {}
        self.demographics: dict[str, dict[str, Any]] = {}
        self.bulk_bonuses: dict[str, dict[str, Any]] = {}
        self.payments: list[dict[str, Any]] = []   # every bonus paid: {bulk, participant_id, amount}
        self.groups: dict[str, dict[str, Any]] = {}
        self.messages: list[dict[str, Any]] = []
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, str] = {}
        self.eligible = 5000                      # what the eligibility count answers (0: fewer than 25)
        self.test_participants: list[str] = []   # the workspace's test participants (a test study needs one)
        self.calls: list[Call] = []
        self.violations: list[str] = []
        self.faults: list[Fault] = []
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None

    # --- test helpers ------------------------------------------------------------------------------------------

    def fail(self, method: str, path: str, kind: str, *, times: int = 1, retry_after: float = 1) -> None:
        if kind.startswith("timeout") and self.settings is not None:
            self.settings.PLATFORM_HTTP_TIMEOUT_SECONDS = self.fault_timeout
        self.faults.append(Fault(method.upper(), re.compile(path), kind, times, retry_after))

    def add_submission(self, study_id: str, participant_id: str | None = None, *, status: str = "AWAITING REVIEW",
                       submission_id: str | None = None, study_code: str | None = None) -> dict[str, Any]:
        sub = {"id": submission_id or hexid(), "participant_id": participant_id or hexid(), "status": status,
               "started_at": now_iso(), "completed_at": now_iso() if status != "ACTIVE" else None,
               "has_siblings": False, "study_code": study_code, "return_requested": None, "study_id": study_id}
        with self.lock:
            self.submissions[sub["id"]] = sub
        return sub

    def calls_to(self, method: str, pattern: str) -> list[Call]:
        rx = re.compile(pattern)
        return [c for c in self.calls if c.method == method and rx.search(c.path)]

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeProlific:
        spec()  # loaded before the first request, not inside one
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _any(self) -> None:
                fake.handle(self)

            do_GET = do_POST = do_PATCH = do_DELETE = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    # --- the request path ----------------------------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        query = parse_qs(parts.query)
        call = Call(h.command, parts.path, query, body)
        with self.lock:
            self.calls.append(call)
            fault = next((f for f in self.faults if f.times > 0 and f.method == h.command
                          and f.path.search(parts.path)), None)
            if fault:
                fault.times -= 1
        if fault and fault.kind in ("429", "500"):
            status = int(fault.kind)
            call.status = status
            headers = {"Retry-After": str(fault.retry_after)} if status == 429 else {}
            return self._send(h, status, {"error": {"status": status, "error_code": status, "title": "Fault",
                                                    "detail": "injected by the test"}}, headers)
        if fault and fault.kind == "timeout_before":
            time.sleep(self.answer_delay)
            call.status = -1
            return self._send(h, 503, {"error": {"status": 503, "error_code": 503, "title": "late",
                                                 "detail": "too late"}})
        if h.headers.get("Authorization") != f"Token {self.token}":
            call.status = 401
            return self._send(h, 401, {"error": {"status": 401, "error_code": 401, "title": "Unauthorized",
                                                 "detail": "Invalid token."}})
        problem = self._validate_request(h, parts, raw, query)
        if problem:
            self.violations.append(f"{h.command} {parts.path}: {problem}")
            call.status = 400
            return self._send(h, 400, {"error": {"status": 400, "error_code": 140100, "title": "Invalid request",
                                                 "detail": problem[:500]}})
        with self.lock:
            status, payload, headers = self.route(h.command, parts.path, query, body)
        call.status = status
        if 200 <= status < 300:
            problem = self._validate_response(h.command, parts.path, query, raw, status, payload)
            if problem:
                self.violations.append(f"response {h.command} {parts.path}: {problem}")
        if fault and fault.kind == "timeout_after":
            time.sleep(self.answer_delay)  # the call took effect; the answer comes after the client gave up
        if fault and fault.kind == "reset_after":
            h.close_connection = True
            h.connection.shutdown(2)  # noqa: PLR2004 - SHUT_RDWR
            return None
        return self._send(h, status, payload, headers)

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None,
              ) -> None:
        data = b"" if payload is None or status == 204 else json.dumps(payload).encode()
        try:
            h.send_response(status)
            for key, value in (headers or {}).items():
                h.send_header(key, value)
            if data:
                h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _mock_request(self, method: str, path: str, query: dict[str, list[str]], raw: bytes,
                      headers: dict[str, str]) -> Any:
        from openapi_core.testing import MockRequest

        return MockRequest("https://api.prolific.com", method.lower(), path,
                           args={k: v[-1] for k, v in query.items()}, data=raw or None,
                           content_type="application/json" if raw else None, headers=headers)

    def _validate_request(self, h: BaseHTTPRequestHandler, parts: Any, raw: bytes,
                          query: dict[str, list[str]]) -> str:
        try:
            spec().validate_request(self._mock_request(h.command, parts.path, query, raw,
                                                       {"Authorization": h.headers.get("Authorization", "")}))
        except Exception as exc:  # noqa: BLE001 - any validation failure is a violation, named
            cause = exc.__cause__ or exc
            return f"{type(exc).__name__}: {cause}"[:800]
        return ""

    def _validate_response(self, method: str, path: str, query: dict[str, list[str]], raw: bytes, status: int,
                           payload: Any) -> str:
        from openapi_core.testing import MockResponse

        data = b"" if payload is None or status == 204 else json.dumps(payload).encode()
        try:
            spec().validate_response(
                self._mock_request(method, path, query, raw, {"Authorization": f"Token {self.token}"}),
                MockResponse(data, status_code=status, content_type="application/json" if data else None))
        except Exception as exc:  # noqa: BLE001
            cause = exc.__cause__ or exc
            return f"{type(exc).__name__}: {cause}"[:800]
        return ""
