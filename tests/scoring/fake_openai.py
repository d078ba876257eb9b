"""A fake OpenAI-compatible chat endpoint over real HTTP (a thread in the test process), for model-annotator tests.

It answers `GET /v1/models` and `POST /v1/chat/completions` like vLLM or llama.cpp's server would. What a completion
says is decided by `answerer(messages, body) -> str` (an "oracle" that reads the displayed item, or a fixed
position bias), sent as `{"answer": …}` JSON, or as it is with `wrap=False` (free text: a model's rewrite);
`faults` is a queue of misbehaviours for the next requests, one each: "malformed" (a body that is not JSON),
"no_choices", "refusal", "out_of_choice", "prose" (the answer inside a sentence), "empty" (no text), "cut" (the text,
stopped at the token limit), "timeout" (sleeps past the client's time-out), "429" (with Retry-After), "500", "401",
"404". Every request is recorded.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answerer = Callable[[list[dict[str, str]], dict[str, Any]], str]


def _field(text: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", text, flags=re.MULTILINE)
    return found.group(1) if found else ""


def informal(text: str) -> bool:
    """The factories' informal sentences start in lower case ("gonna be late lol 3", "pls help me out 3")."""
    return text[:1].islower()


def oracle(messages: list[dict[str, str]], body: dict[str, Any]) -> str:
    """A model that gets every ordering item right, whatever the order: it matches sentences to anchors by case."""
    user = _item(messages)
    a1, a2, s1, s2 = (_field(user, name) for name in ("A1", "A2", "S1", "S2"))
    if a2:  # quadruple
        return "S1-S2" if informal(s1) == informal(a1) else "S2-S1"
    if _choices(user)[:1] and _choices(user)[0].isdigit():  # Likert: the middle of the scale
        values = sorted(int(c) for c in _choices(user))
        return str(values[len(values) // 2])
    return "S1" if informal(s1) == informal(a1) else "S2"


def first_choice(messages: list[dict[str, str]], body: dict[str, Any]) -> str:
    """A model with a pure position bias: always the first answer listed (order-sensitive on every item)."""
    return _choices(_item(messages))[0]


def _item(messages: list[dict[str, str]]) -> str:
    """The first user message: the item (a corrective retry appends another)."""
    return next(m["content"] for m in messages if m["role"] == "user")


def _choices(user: str) -> list[str]:
    line = [ln for ln in user.splitlines() if ln.startswith("Answer with exactly one of: ")]
    return line[-1].removeprefix("Answer with exactly one of: ").rstrip(".").split(", ") if line else []


# One small reply per canned fault: (status, body, extra headers), or None when the fault needs the answerer.
Reply = tuple[int, Any, "dict[str, str] | None"]


def _fault_timeout(fake: FakeOpenAI, body: dict[str, Any]) -> Reply:
    time.sleep(fake.sleep)
    return 200, fake.completion(body, "{}"), None


def _fault_status(fault: str) -> Callable[[FakeOpenAI, dict[str, Any]], Reply]:
    return lambda fake, body: (int(fault), {"error": {"message": f"fake {fault}"}},
                               {"Retry-After": "0"} if fault == "429" else None)


FAULT_REPLIES: dict[str, Callable[[FakeOpenAI, dict[str, Any]], Reply]] = {
    "timeout": _fault_timeout,
    **{code: _fault_status(code) for code in ("429", "500", "401", "404")},
    "malformed": lambda fake, body: (200, b"<html>gateway</html>", None),
    "no_choices": lambda fake, body: (200, {"id": "x", "object": "chat.completion", "choices": []}, None),
    "refusal": lambda fake, body: (200, fake.completion(body, None, refusal="I can't help with that."), None),
    "out_of_choice": lambda fake, body: (200, fake.completion(body, json.dumps({"answer": "S3"})), None),
    "empty": lambda fake, body: (200, fake.completion(body, ""), None),
}


def _answered(fake: FakeOpenAI, body: dict[str, Any], fault: str) -> Reply:
    answer = fake.answerer(body["messages"], body)
    if fault == "prose":
        return 200, fake.completion(body, f"I think the answer is {answer}."), None
    content = json.dumps({"answer": answer}) if fake.wrap else answer
    return 200, fake.completion(body, content, finish_reason="length" if fault == "cut" else "stop"), None


class _ChatHandler(BaseHTTPRequestHandler):
    fake: FakeOpenAI  # set per server

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/v1/models"):
            self._send(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "no such route"}})

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with fake.lock:
            fake.requests.append({"path": self.path, "body": body,
                                  "authorization": self.headers.get("Authorization", "")})
            fault = fake.faults.popleft() if fake.faults else ""  # "" = no fault for this request
        if not self.path.rstrip("/").endswith("/v1/chat/completions"):
            return self._send(404, {"error": {"message": "no such route"}})
        if body.get("model") != fake.model:
            return self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
        reply = FAULT_REPLIES[fault](fake, body) if fault in FAULT_REPLIES else _answered(fake, body, fault)
        return self._send(*reply)


class FakeOpenAI:
    def __init__(self, answerer: Answerer = oracle, *, model: str = "fake-model", sleep: float = 2.0,
                 wrap: bool = True) -> None:
        self.answerer = answerer
        self.wrap = wrap
        self.model = model
        self.sleep = sleep
        self.faults: deque[str] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        handler = type("Handler", (_ChatHandler,), {"fake": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def completion(self, body: dict[str, Any], content: str | None, refusal: str | None = None,
                   finish_reason: str = "stop") -> dict[str, Any]:
        prompt = sum(len(m["content"].split()) for m in body.get("messages", []))
        return {"id": "chatcmpl-fake", "object": "chat.completion", "model": self.model,
                "choices": [{"index": 0, "finish_reason": finish_reason,
                             "message": {"role": "assistant", "content": content, "refusal": refusal}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
