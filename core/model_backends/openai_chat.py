"""The OpenAI-compatible chat endpoint: the one module that talks to it (vLLM, llama.cpp's server, Ollama, hosted
APIs all speak `POST {base_url}/chat/completions`).

`OpenAIChatClient` is the HTTP client: every call has its timeouts set; time-outs, refused connections, 429 and 5xx
are retried with exponential back-off (a 429's or 503's Retry-After is honoured, capped); everything else is mapped
to an ApplicationError with a code of its own. Asking a model a question moves no money and messages nobody, so
retrying a call whose outcome is unknown is safe here (the worst case is a paid token count twice).

`OpenAIChatBackend` is the model back-end (`core.model_backends`): it asks for a JSON object `{"answer": …}`
constrained to the choices (structured output, `response_format` json_schema, which vLLM, llama.cpp's server,
Ollama and OpenAI accept), reads the reply (JSON, else a regex for exactly one choice in the text), asks once more
with a correction when the reply is refused, unreadable or outside the choices, and otherwise records "no answer"
with the reason.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from core.error_codes import (
    INVALID_BASE_URL,
    MISSING_MODEL,
    MODEL_ENDPOINT_AUTH,
    MODEL_ENDPOINT_ERROR,
    MODEL_ENDPOINT_RATE_LIMITED,
    MODEL_ENDPOINT_TIMEOUT,
    MODEL_ENDPOINT_UNREACHABLE,
    MODEL_NOT_FOUND,
    MODEL_REPLY_MALFORMED,
    MODEL_REQUEST_REFUSED,
)
from core.errors import ApplicationError
from core.model_backends.base import ChoiceQuestion, ModelReply, ReplyStatus, register
from core.outbound import outbound_url_check

RETRY_STATUSES = (429, 500, 502, 503, 504)


class EndpointError(ApplicationError):
    """An endpoint failure. `transient`: time-outs, 429 and 5xx that outlived every retry (the next question may
    fare better); otherwise the endpoint refuses every request alike (unreachable, unauthorised, unknown model)."""

    def __init__(self, message: str, *, code: str, status: int = 502, transient: bool = False) -> None:
        super().__init__(message, code=code, status=status, field="base_url")
        self.transient = transient


class MalformedReply(ApplicationError):
    def __init__(self, message: str) -> None:
        super().__init__(message, code=MODEL_REPLY_MALFORMED, status=502)


@dataclass
class ChatResult:
    text: str
    refusal: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    requests: int


def base_url_check(base_url: str) -> str:
    """The endpoint's base URL without a trailing slash; http(s) with a host, and an address the server may connect
    to (settings.MODEL_ALLOWED_URLS, `core.outbound`), else an ApplicationError."""
    url = (base_url or "").strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ApplicationError(f"Base URL: {base_url!r} is not an http(s) URL such as http://127.0.0.1:8000/v1.",
                               code=INVALID_BASE_URL, field="base_url")
    return outbound_url_check(url, allowed=settings.MODEL_ALLOWED_URLS, setting="MODEL_ALLOWED_URLS",
                              label="Base URL", field="base_url")


class OpenAIChatClient:
    def __init__(self, *, base_url: str, api_key: str = "", timeout: float = 60.0, connect_timeout: float = 5.0,
                 max_retries: int = 3, backoff: float = 1.0, backoff_max: float = 30.0,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url_check(base_url)
        self.max_retries = max(0, int(max_retries))
        self.backoff = max(0.0, float(backoff))
        self.backoff_max = float(backoff_max)
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            timeout=httpx.Timeout(float(timeout), connect=float(connect_timeout)), headers=headers,
            transport=transport, follow_redirects=False,
        )

    def close(self) -> None:
        self._http.close()

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = min(self.backoff_max, self.backoff * (2 ** attempt))
        header = response.headers.get("retry-after") if response is not None else None
        if header:
            try:
                delay = min(self.backoff_max, max(0.0, float(header)))
            except ValueError:
                pass
        return delay

    @staticmethod
    def _answer(url: str, response: httpx.Response) -> dict[str, Any]:
        """A final (not retried) response: its JSON object, or the error that its status or body means."""
        if response.status_code in (401, 403):
            raise EndpointError(f"Base URL: {url} refused the credentials (HTTP {response.status_code}); set "
                                "OPENAI_API_KEY to the endpoint's key.", code=MODEL_ENDPOINT_AUTH)
        if response.status_code == 404:
            raise EndpointError(f"Base URL: {url} answered 404: {_error_text(response)} (is the model served "
                                "there, and does the URL end in /v1?)", code=MODEL_NOT_FOUND, status=404)
        if response.status_code >= 400:
            raise EndpointError(f"Base URL: {url} refused the request (HTTP {response.status_code}): "
                                f"{_error_text(response)}", code=MODEL_REQUEST_REFUSED, status=502)
        try:
            data = response.json()
        except ValueError:
            raise MalformedReply(f"{url} answered HTTP {response.status_code} with a body that is not JSON: "
                                 f"{response.text[:200]!r}") from None
        if not isinstance(data, dict):
            raise MalformedReply(f"{url} answered a JSON {type(data).__name__}, not an object")
        return data

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[dict[str, Any], int]:
        """One call with retries; (decoded JSON body, requests made)."""
        url = f"{self.base_url}{path}"
        base_url_check(self.base_url)  # again at call time: the name may resolve elsewhere since the door checked it
        requests = 0
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            requests += 1
            try:
                response = self._http.request(method, url, json=body)
            except httpx.TimeoutException:
                if last:
                    raise EndpointError(f"Base URL: {url} did not answer within the time-out after {requests} "
                                        "attempt(s).", code=MODEL_ENDPOINT_TIMEOUT, status=504,
                                        transient=True) from None
                self._sleep(self._delay(attempt, None))
                continue
            except httpx.TransportError as exc:
                if last:
                    raise EndpointError(f"Base URL: cannot reach {url} ({type(exc).__name__}: {exc}) after "
                                        f"{requests} attempt(s).", code=MODEL_ENDPOINT_UNREACHABLE) from None
                self._sleep(self._delay(attempt, None))
                continue
            if response.status_code in RETRY_STATUSES:
                if last:
                    code = MODEL_ENDPOINT_RATE_LIMITED if response.status_code == 429 else MODEL_ENDPOINT_ERROR
                    raise EndpointError(f"Base URL: {url} answered HTTP {response.status_code} to each of "
                                        f"{requests} attempt(s): {_error_text(response)}", code=code,
                                        status=429 if response.status_code == 429 else 502, transient=True)
                self._sleep(self._delay(attempt, response))
                continue
            return self._answer(url, response), requests
        raise AssertionError("unreachable")  # pragma: no cover

    def models(self) -> list[str]:
        """The model ids the endpoint lists (GET /models): also the reachability check before a run."""
        data, _ = self._request("GET", "/models")
        return [str(item.get("id")) for item in data.get("data", []) if isinstance(item, dict)]

    def chat(self, *, model: str, messages: list[dict[str, str]], temperature: float = 0.0,
             max_tokens: int | None = None, response_format: dict[str, Any] | None = None,
             seed: int | None = None) -> ChatResult:
        body: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature, "n": 1}
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        if response_format is not None:
            body["response_format"] = response_format
        if seed is not None:
            body["seed"] = int(seed)
        data, requests = self._request("POST", "/chat/completions", body)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedReply(f"the reply has no choices: {json.dumps(data)[:200]}")
        message = choices[0].get("message") or {}
        if not isinstance(message, dict):
            raise MalformedReply("the reply's message is not an object")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        content = message.get("content")
        return ChatResult(
            text=content if isinstance(content, str) else "",
            refusal=str(message.get("refusal") or ""),
            finish_reason=str(choices[0].get("finish_reason") or ""),
            prompt_tokens=_int(usage.get("prompt_tokens")), completion_tokens=_int(usage.get("completion_tokens")),
            requests=requests,
        )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            return str(error.get("message") or error)[:300]
        return str(error or data)[:300]
    except ValueError:
        return response.text[:300]


def answer_schema(choices: tuple[str, ...]) -> dict[str, Any]:
    """Structured output: a JSON object with one key `answer`, whose value is one of the choices."""
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
        "type": "object", "properties": {"answer": {"type": "string", "enum": list(choices)}},
        "required": ["answer"], "additionalProperties": False}}}


def choice_read(text: str, choices: tuple[str, ...]) -> tuple[str | None, str]:
    """(the choice, "") or (None, the status): JSON `{"answer": …}` first, else exactly one choice named in the text
    (longest choices first, whole tokens only, so "S1" is not found inside "S1-S2")."""
    stripped = (text or "").strip()
    if not stripped:
        return None, ReplyStatus.MALFORMED
    if stripped.startswith(("{", "```")):
        body = stripped.strip("`").removeprefix("json").strip()
        try:
            data = json.loads(body)
        except ValueError:
            return None, ReplyStatus.MALFORMED
        value = data.get("answer") if isinstance(data, dict) else None
        value = str(value).strip() if value is not None else ""
        return (value, "") if value in choices else (None, ReplyStatus.OUT_OF_CHOICE)
    found: set[str] = set()
    remaining = stripped
    for choice in sorted(choices, key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w-]){re.escape(choice)}(?![\w-])")
        if pattern.search(remaining):
            found.add(choice)
            remaining = pattern.sub(" ", remaining)
    if len(found) == 1:
        return found.pop(), ""
    return None, ReplyStatus.OUT_OF_CHOICE


@register("openai")
class OpenAIChatBackend:
    """An OpenAI-compatible chat model answering with one of the choices (temperature 0)."""

    name = "openai"

    def __init__(self, *, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", structured: bool = True,
                 timeout: float = 60.0, max_retries: int = 3, backoff: float = 1.0, max_tokens: int = 64,
                 seed: int | None = 0, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, **_: Any) -> None:
        if not (model or "").strip():
            raise ApplicationError("Model: name the model the endpoint serves (e.g. the name vLLM was started "
                                   "with).", code=MISSING_MODEL, field="model")
        self.model = model.strip()
        self.structured = bool(structured)
        self.max_tokens = int(max_tokens)
        self.seed = seed
        # The key is read from the environment and never stored with the run.
        self.client = OpenAIChatClient(base_url=base_url, api_key=os.environ.get(api_key_env, ""), timeout=timeout,
                                       max_retries=max_retries, backoff=backoff, transport=transport, sleep=sleep)

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "base_url": self.client.base_url, "model": self.model,
                "structured": self.structured}

    def check(self) -> dict[str, Any]:
        """Before a run: the endpoint answers (GET /models). A 404 there is no proof of absence (some servers lack
        the route), so only an endpoint that cannot be reached or refuses the key fails the check."""
        try:
            served = self.client.models()
        except EndpointError as exc:
            if exc.code == MODEL_NOT_FOUND:
                return {"served_models": []}
            raise
        except MalformedReply:
            return {"served_models": []}
        return {"served_models": served}

    def _ask(self, messages: list[dict[str, str]], choices: tuple[str, ...], reply: ModelReply) -> tuple[str | None,
                                                                                                        str, str]:
        try:
            result = self.client.chat(
                model=self.model, messages=messages, max_tokens=self.max_tokens, seed=self.seed,
                response_format=answer_schema(choices) if self.structured else None)
        except MalformedReply as exc:
            reply.requests += 1
            return None, ReplyStatus.MALFORMED, exc.message
        reply.requests += result.requests
        reply.prompt_tokens += result.prompt_tokens
        reply.completion_tokens += result.completion_tokens
        if result.refusal or result.finish_reason == "content_filter":
            return None, ReplyStatus.REFUSED, result.refusal or result.text or "content filter"
        choice, status = choice_read(result.text, choices)
        return choice, status, result.text

    def answer(self, question: ChoiceQuestion) -> ModelReply:
        reply = ModelReply(choice=None, status=ReplyStatus.ERROR)
        messages = list(question.messages)
        try:
            choice, status, raw = self._ask(messages, question.choices, reply)
            if choice is None:
                # The one corrective retry: the reply so far, then the instruction again, plainly.
                messages += [{"role": "assistant", "content": raw[:2000] or "(no answer)"},
                             {"role": "user", "content": "Please answer with exactly one of: "
                              + ", ".join(question.choices) + ' — as JSON: {"answer": "<one of them>"}.'}]
                choice, status, raw = self._ask(messages, question.choices, reply)
                status = ReplyStatus.ANSWERED_ON_RETRY if choice is not None else status
            else:
                status = ReplyStatus.ANSWERED
        except EndpointError as exc:
            if not exc.transient:
                raise
            reply.requests += self.client.max_retries + 1
            reply.error = exc.message
            return reply
        reply.choice, reply.status, reply.raw = choice, status, raw[:2000]
        return reply

    def close(self) -> None:
        self.client.close()
