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
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

_SPEC = None
_SPEC_LOCK = threading.Lock()


def spec() -> Any:
    """Prolific's description, loaded once (its own schema validation off: the file has a few quirks)."""
    global _SPEC
    with _SPEC_LOCK:
        if _SPEC is None:
            from django.conf import settings
            from openapi_core import Config, OpenAPI

            path = Path(settings.SHARED_DATA_DIR) / "platforms" / "prolific" / "publicapi.yaml"
            _SPEC = OpenAPI.from_file_path(str(path), config=Config(spec_validator_cls=None))
    return _SPEC


def hexid() -> str:
    return secrets.token_hex(12)


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


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


class FakeProlific:
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
        self.bulk_bonuses: dict[str, dict[str, Any]] = {}
        self.payments: list[dict[str, Any]] = []   # every bonus paid: {bulk, participant_id, amount}
        self.groups: dict[str, dict[str, Any]] = {}
        self.messages: list[dict[str, Any]] = []
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, str] = {}
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

    # --- Prolific's behaviour ----------------------------------------------------------------------------------

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any,
              ) -> tuple[int, Any, dict[str, str]]:
        def q(name: str) -> str | None:
            return (query.get(name) or [None])[-1]

        if method == "GET" and path == "/api/v1/users/me/":
            return 200, dict(self.user), {}
        if method == "GET" and path == "/api/v1/workspaces/":
            return 200, {"results": [{"id": self.workspace_id, "title": "My workspace"}]}, {}
        if method == "POST" and path == "/api/v1/studies/":
            return self._study_create(body)
        if method == "GET" and path in ("/api/v1/studies/",) or re.fullmatch(r"/api/v1/projects/\w+/studies/", path):
            rows = [{k: s[k] for k in ("id", "name", "internal_name", "status", "total_available_places", "reward")}
                    for s in self.studies.values()]
            return 200, {"results": rows}, {}
        if m := re.fullmatch(r"/api/v1/studies/(\w+)/", path):
            study = self.studies.get(m[1])
            if study is None:
                return self._error(404, "Not found", "No study with this id.")
            return 200, study, {}
        if m := re.fullmatch(r"/api/v1/studies/(\w+)/transition/", path):
            study = self.studies.get(m[1])
            if study is None:
                return self._error(404, "Not found", "No study with this id.")
            if body["action"] == "PUBLISH":
                if study["status"] != "UNPUBLISHED":
                    return self._error(400, "Bad transition", f"cannot publish a {study['status']} study")
                study["status"] = "ACTIVE"
            return 200, study, {}
        if method == "GET" and path == "/api/v1/submissions/":
            return self._submissions_page(q("study"), int(q("page") or 1), int(q("page_size") or 20))
        if m := re.fullmatch(r"/api/v1/submissions/(\w+)/", path):
            sub = self.submissions.get(m[1])
            if sub is None:
                return self._error(404, "Not found", "No submission with this id.")
            return 200, {"id": sub["id"], "participant": sub["participant_id"], "status": sub["status"],
                         "started_at": sub["started_at"], "completed_at": sub["completed_at"],
                         "study_id": sub["study_id"], "entered_code": sub["study_code"],
                         "return_requested": sub["return_requested"]}, {}
        if m := re.fullmatch(r"/api/v1/submissions/(\w+)/transition/", path):
            return self._transition(m[1], body)
        if m := re.fullmatch(r"/api/v1/submissions/(\w+)/request-return/", path):
            sub = self.submissions.get(m[1])
            if sub is None:
                return self._error(404, "Not found", "No submission with this id.")
            sub["return_requested"] = now_iso()
            return 200, {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                         "return_requested": sub["return_requested"]}, {}
        if path == "/api/v1/submissions/bulk-approve/":
            ids = body.get("submission_ids") or []
            for sid in ids:
                if sid in self.submissions and self.submissions[sid]["status"] == "AWAITING REVIEW":
                    self.submissions[sid]["status"] = "APPROVED"
            return 200, "The request to bulk approve has been made successfully.", {}
        if path == "/api/v1/submissions/bonus-payments/":
            return self._bonus_setup(body)
        if m := re.fullmatch(r"/api/v1/bulk-bonus-payments/(\w+)/pay/", path):
            bulk = self.bulk_bonuses.get(m[1])
            if bulk is None:
                return self._error(404, "Not found", "No bulk bonus with this id.")
            for participant, amount in bulk["lines"]:
                self.payments.append({"bulk": m[1], "participant_id": participant, "amount": amount})
            bulk["paid_times"] += 1
            return 202, "The bonuses will be paid.", {}
        if path == "/api/v1/messages/bulk/":
            self.messages.append(dict(body))
            return 204, None, {}
        if method == "POST" and path == "/api/v1/participant-groups/":
            group = {"id": hexid(), "name": body["name"], "workspace_id": body.get("workspace_id"),
                     "description": body.get("description"), "participant_count": len(body.get("participant_ids")
                                                                                      or []),
                     "is_deleted": False, "members": list(body.get("participant_ids") or [])}
            self.groups[group["id"]] = group
            return 201, {k: v for k, v in group.items() if k != "members"}, {}
        if m := re.fullmatch(r"/api/v1/participant-groups/(\w+)/participants/", path):
            group = self.groups.get(m[1])
            if group is None:
                return self._error(404, "Not found", "No group with this id.")
            if method == "POST":
                group["members"] += [p for p in body.get("participant_ids") or [] if p not in group["members"]]
            elif method == "DELETE":
                group["members"] = [p for p in group["members"] if p not in (body.get("participant_ids") or [])]
            return 200, {"results": [{"participant_id": p, "datetime_created": now_iso()}
                                     for p in group["members"]]}, {}
        if path == "/api/v1/hooks/secrets/":
            value = secrets.token_urlsafe(32)
            self.secrets[body["workspace_id"]] = value
            return 201, {"id": hexid(), "value": value, "workspace_id": body["workspace_id"]}, {}
        if path == "/api/v1/hooks/subscriptions/":
            sub = {"id": hexid(), "event_type": body["event_type"], "target_url": body["target_url"],
                   "workspace_id": body["workspace_id"], "is_enabled": False}
            hook_secret = secrets.token_hex(16)
            self.subscriptions[sub["id"]] = {**sub, "hook_secret": hook_secret}
            return 201, {"results": [sub]}, {"X-Hook-Secret": hook_secret}
        if m := re.fullmatch(r"/api/v1/hooks/subscriptions/(\w+)/", path):
            sub = self.subscriptions.get(m[1])
            if sub is None or sub["hook_secret"] != body.get("secret"):
                return self._error(400, "Bad secret", "The secret does not match.")
            sub["is_enabled"] = True
            return 200, {k: v for k, v in sub.items() if k != "hook_secret"}, {}
        return self._error(404, "Not found", f"{method} {path} is not part of this fake")

    def _error(self, status: int, title: str, detail: str) -> tuple[int, Any, dict[str, str]]:
        return status, {"error": {"status": status, "error_code": status * 100, "title": title,
                                  "detail": detail}}, {}

    def _study_create(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        codes = [c["code"] for c in body.get("completion_codes") or []]
        if len(codes) != len(set(codes)):
            return self._error(400, "Invalid completion codes", "Each code must be unique within a study.")
        for code in body.get("completion_codes") or []:
            for action in code["actions"]:
                if action["action"] == "FIXED_SCREEN_OUT_PAYMENT" and action["fixed_screen_out_reward"] >= \
                        body["reward"]:
                    return self._error(400, "Invalid screen-out reward", "It must be less than the study reward.")
        if not body.get("external_study_url"):
            return self._error(400, "Missing URL", "external_study_url is required.")
        study = {**body, "id": hexid(), "status": "UNPUBLISHED", "is_ready_to_publish": True}
        self.studies[study["id"]] = study
        return 201, study, {}

    def _submissions_page(self, study_id: str | None, page: int, page_size: int) -> tuple[int, Any, dict[str, str]]:
        size = max(1, min(page_size, self.page_size_max))
        rows = [s for s in self.submissions.values() if study_id in (None, s["study_id"])]
        chunk = rows[(page - 1) * size: page * size]
        more = page * size < len(rows)
        nxt = f"{self.url}/api/v1/submissions/?study={study_id}&page={page + 1}&page_size={size}" if more else None
        results = [{k: s[k] for k in ("id", "participant_id", "status", "started_at", "completed_at", "has_siblings",
                                      "study_code", "return_requested")} for s in chunk]
        return 200, {"results": results, "_links": {"self": {"href": None}, "next": {"href": nxt},
                                                    "previous": {"href": None}, "last": {"href": None}},
                     "meta": {"count": len(rows)}}, {}

    def _transition(self, sid: str, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        sub = self.submissions.get(sid)
        if sub is None:
            return self._error(404, "Not found", "No submission with this id.")
        action = body["action"]
        if action == "REJECT":
            message = body.get("message") or ""
            if len(message) < 100:
                self.violations.append(f"rejection message of {len(message)} characters (Prolific needs 100)")
                return self._error(400, "Invalid message", "The message must be at least 100 characters long.")
            if not body.get("rejection_category"):
                return self._error(400, "Missing category", "rejection_category is required to reject.")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED", "SCREEN_OUT": "SCREENED OUT"}.get(action)
        if target and sub["status"] == "AWAITING REVIEW":
            sub["status"] = target
        elif target and sub["status"] != target:
            return self._error(400, "Bad transition", f"cannot {action.lower()} a {sub['status']} submission")
        return 200, {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                     "started_at": sub["started_at"], "study_id": sub["study_id"]}, {}

    def _bonus_setup(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        study_id = body.get("study_id")
        if study_id not in self.studies:
            return self._error(400, "Unknown study", "The study does not exist.")
        taken_part = {s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id}
        lines, bad = [], []
        for line in (body.get("csv_bonuses") or "").splitlines():
            if not line.strip():
                continue
            participant, amount = line.split(",")
            if participant not in taken_part:
                bad.append(participant)
            lines.append((participant, float(amount)))
        if bad:
            return self._error(400, "Invalid participants", f"Not in the study: {', '.join(bad)}")
        amount = round(sum(a for _, a in lines) * 100)
        bulk = {"id": hexid(), "study": study_id, "amount": amount, "fees": round(amount * 0.333),
                "vat": 0, "total_amount": amount + round(amount * 0.333)}
        self.bulk_bonuses[bulk["id"]] = {**bulk, "lines": lines, "paid_times": 0}
        return 201, bulk, {}
