"""The model's own rewrite of a source, for the `model_similarity` signal: an OpenAI-compatible chat endpoint (vLLM,
llama.cpp's server, Ollama, hosted APIs) asked through the project's one client for it
(`core.model_backends.openai_chat.OpenAIChatClient`) to rewrite each source as the study asks its writers to.

- `rewrite_model_options`: what every door checks before anything is stored or queued (the URL is http(s) and the
  endpoint answers, a model is named, the key's variable name is a name). The API key itself is read from the
  environment variable it names (default OPENAI_API_KEY) by whoever makes the requests, and is never stored.
- `study_model_rewriter`: the `model_rewriter(source, target_style) -> text` that `writing_signals_compute` takes,
  prompted with the study's own instructions and examples (what its writers were shown), at temperature 0; one
  request per distinct source in a run. A refusal, an empty or unreadable reply, or an endpoint that does not answer
  in time for one source raises `NoModelRewrite` (the signal is "not measured" on that source's rewrites); an
  endpoint that refuses every request (wrong key, unknown model) fails the run with an ApplicationError.
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from annotation.error_codes import INVALID_OPTION, MISSING_REWRITE_MODEL_URL
from annotation.models import Study
from annotation.services.writing_signals.measures import NoModelRewrite
from core.error_codes import MISSING_MODEL, MODEL_ENDPOINT_AUTH, MODEL_NOT_FOUND
from core.errors import ApplicationError
from core.model_backends.openai_chat import EndpointError, MalformedReply, OpenAIChatClient, base_url_check

API_KEY_ENV_DEFAULT = "OPENAI_API_KEY"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
CHECK_TIMEOUT = 10.0  # the door's reachability check answers in seconds, whatever the run's time-out
TIMEOUT = 60.0
MAX_RETRIES = 2
MAX_TOKENS = 512  # a rewrite is a sentence or two (at most the study's max length, 500 characters by default)
REPLY_RULE = ("You will be given one original at a time. Reply with your rewrite only: no quotation marks, no "
              "label, no explanation.")
_LABEL = re.compile(r"^\s*(?:rewrite|rewritten|answer)\s*:\s*", flags=re.IGNORECASE)
_QUOTES = (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("«", "»"))


@dataclass(frozen=True)
class RewriteModel:
    """Where the model's rewrites come from: what a run stores (never the key, only the name of its variable)."""

    base_url: str
    model: str
    api_key_env: str = API_KEY_ENV_DEFAULT

    def params(self) -> dict[str, str]:
        return {"rewrite_model_url": self.base_url, "rewrite_model": self.model, "api_key_env": self.api_key_env}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RewriteModel | None:
        if not params.get("rewrite_model_url"):
            return None
        return cls(base_url=params["rewrite_model_url"], model=params["rewrite_model"],
                   api_key_env=params.get("api_key_env") or API_KEY_ENV_DEFAULT)


def _as_door_error(exc: ApplicationError, endpoint: RewriteModel) -> ApplicationError:
    """An endpoint failure in the doors' words: the option it comes from, and the key's variable when refused."""
    message = exc.message.removeprefix("Base URL: ")
    if exc.code == MODEL_ENDPOINT_AUTH:
        unset = "" if os.environ.get(endpoint.api_key_env) else f" ({endpoint.api_key_env} is not set here)"
        message = (f"{endpoint.base_url} refused the credentials: set the environment variable "
                   f"{endpoint.api_key_env} to the endpoint's key{unset}, or name the variable that holds it.")
    return ApplicationError(f"Rewrite model URL: {message}", code=exc.code, status=exc.status,
                            field="rewrite_model_url")


def rewrite_model_options(*, base_url: str | None, model: str | None, api_key_env: str | None = None,
                          check: bool = True, transport: httpx.BaseTransport | None = None) -> RewriteModel | None:
    """The endpoint a writing-signals run asks for its own rewrites, checked as every door checks it; None when no
    URL is given (the signal stays off). `check`: the endpoint must answer GET /models (a 404 there passes, since
    some servers lack the route; an unreachable endpoint or a refused key does not)."""
    base_url, model, api_key_env = (base_url or "").strip(), (model or "").strip(), (api_key_env or "").strip()
    if not base_url:
        if model:
            raise ApplicationError("Rewrite model URL: give the URL of the endpoint that serves the rewrite "
                                   "model, such as http://127.0.0.1:8000/v1.", code=MISSING_REWRITE_MODEL_URL,
                                   field="rewrite_model_url")
        if api_key_env:
            raise ApplicationError("API key env: only used with a rewrite model URL.",
                                   code=INVALID_OPTION, field="api_key_env")
        return None
    try:
        base_url = base_url_check(base_url)
    except ApplicationError as exc:
        raise ApplicationError(exc.message.replace("Base URL:", "Rewrite model URL:", 1), code=exc.code,
                               field="rewrite_model_url") from None
    if not model:
        raise ApplicationError("Rewrite model: name the model the endpoint serves (e.g. the name vLLM was started "
                               "with).", code=MISSING_MODEL, field="rewrite_model")
    if len(model) > 200:
        raise ApplicationError("Rewrite model: a model name has at most 200 characters.", code=INVALID_OPTION,
                               field="rewrite_model")
    # The value is never echoed back: a key pasted here by mistake must not reach a message, a log or a row.
    if api_key_env and not ENV_NAME.fullmatch(api_key_env):
        raise ApplicationError("API key env: give the name of the environment variable that holds the key (such as "
                               "OPENAI_API_KEY), never the key itself.", code=INVALID_OPTION, field="api_key_env")
    if api_key_env and api_key_env != API_KEY_ENV_DEFAULT and api_key_env not in os.environ:
        raise ApplicationError("API key env: no environment variable of that name is set here; set it (for the "
                               "server and the worker alike) or give another name.", code=INVALID_OPTION,
                               field="api_key_env")
    endpoint = RewriteModel(base_url=base_url, model=model, api_key_env=api_key_env or API_KEY_ENV_DEFAULT)
    if check:
        _endpoint_check(endpoint, transport=transport)
    return endpoint


def _endpoint_check(endpoint: RewriteModel, *, transport: httpx.BaseTransport | None) -> None:
    """The endpoint must answer GET /models (a 404 there passes: some servers lack the route)."""
    client = OpenAIChatClient(base_url=endpoint.base_url, api_key=os.environ.get(endpoint.api_key_env, ""),
                              timeout=CHECK_TIMEOUT, max_retries=1, backoff=0.5, transport=transport)
    try:
        client.models()
    except EndpointError as exc:
        if exc.code != MODEL_NOT_FOUND:
            raise _as_door_error(exc, endpoint) from None
    except MalformedReply:
        pass  # it answered; whether it serves chat completions shows on the first rewrite
    finally:
        client.close()


def study_instructions(study: Study) -> str:
    """What the study's writers are told (its task description: the target style, the rules and the worked
    examples), which is what the model is told too, so that its rewrite is one a writer could have written."""
    return (study.task_description or "").strip()


def reply_text(text: str) -> str:
    """The rewrite in a reply: spaces, a leading "Rewrite:" label and one pair of enclosing quotes removed."""
    text = _LABEL.sub("", (text or "").strip()).strip()
    for left, right in _QUOTES:
        if len(text) >= 2 and text.startswith(left) and text.endswith(right) and left not in text[1:-1]:
            return text[1:-1].strip()
    return text


class EndpointRewriter:
    """`(source, target_style) -> the model's rewrite`, one request per distinct pair (kept for the run)."""

    def __init__(self, *, endpoint: RewriteModel, instructions: str = "", timeout: float = TIMEOUT,
                 max_retries: int = MAX_RETRIES, max_tokens: int = MAX_TOKENS, backoff: float = 1.0,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = endpoint
        self.instructions = instructions.strip()
        self.max_tokens = int(max_tokens)
        self.requests = 0
        self.tokens = {"prompt": 0, "completion": 0}
        self._cache: dict[tuple[str, str], str | NoModelRewrite] = {}
        # The key is read from the environment here, in the process that makes the requests, and kept nowhere else.
        self.client = OpenAIChatClient(base_url=endpoint.base_url, api_key=os.environ.get(endpoint.api_key_env, ""),
                                       timeout=timeout, max_retries=max_retries, backoff=backoff, transport=transport,
                                       sleep=sleep)

    @property
    def name(self) -> str:
        return self.endpoint.model

    def messages(self, source: str, target_style: str) -> list[dict[str, str]]:
        style = target_style.strip()
        system = self.instructions or (f"Rewrite each sentence so that it is {style or 'in the requested style'}, "
                                       "keeping its meaning: change how it is said, not what is said.")
        user = (f"Target style: {style}\n" if style else "") + f"Original: {source}"
        return [{"role": "system", "content": f"{system}\n\n{REPLY_RULE}"}, {"role": "user", "content": user}]

    def __call__(self, source: str, target_style: str) -> str:
        key = (source, target_style)
        if key not in self._cache:
            self._cache[key] = self._ask(source, target_style)
        outcome = self._cache[key]
        if isinstance(outcome, NoModelRewrite):
            raise NoModelRewrite(str(outcome))
        return outcome

    def _ask(self, source: str, target_style: str) -> str | NoModelRewrite:
        try:
            result = self.client.chat(model=self.endpoint.model, messages=self.messages(source, target_style),
                                      temperature=0.0, max_tokens=self.max_tokens, seed=0)
        except MalformedReply as exc:
            self.requests += 1
            return NoModelRewrite(f"its reply could not be read: {exc.message[:200]}")
        except EndpointError as exc:
            if not exc.transient:  # the endpoint refuses every request alike: the run cannot measure this signal
                raise _as_door_error(exc, self.endpoint) from None
            self.requests += self.client.max_retries + 1
            return NoModelRewrite("the endpoint did not answer: " + exc.message.removeprefix("Base URL: ")[:200])
        self.requests += result.requests
        self.tokens["prompt"] += result.prompt_tokens
        self.tokens["completion"] += result.completion_tokens
        if result.refusal or result.finish_reason == "content_filter":
            return NoModelRewrite("it declined: " + (result.refusal or "the endpoint's content filter")[:200])
        text = reply_text(result.text)
        if not text:
            return NoModelRewrite("its reply was empty")
        if result.finish_reason == "length":
            # A rewrite cut short would look less alike than it is: better not measured than under-measured.
            return NoModelRewrite(f"its rewrite was cut at {self.max_tokens} tokens")
        return text

    def summary(self) -> dict[str, Any]:
        return {"model": self.endpoint.model, "base_url": self.endpoint.base_url, "requests": self.requests,
                "prompt_tokens": self.tokens["prompt"], "completion_tokens": self.tokens["completion"]}

    def close(self) -> None:
        self.client.close()


def study_model_rewriter(*, study: Study, endpoint: RewriteModel, **client_options: Any) -> EndpointRewriter:
    """The model rewriter of a writing-signals run on `study`: its writers' instructions as the prompt."""
    return EndpointRewriter(endpoint=endpoint, instructions=study_instructions(study), **client_options)
