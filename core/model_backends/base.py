"""The model back-ends' interface and registry (the package's `__init__` loads the built-in back-ends, which
register themselves here)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


class ReplyStatus:
    """Why a reply has (or lacks) a choice; stored with every model answer."""

    ANSWERED = "answered"  # one of the choices, first time
    ANSWERED_ON_RETRY = "answered_on_retry"  # one of the choices after the one corrective retry
    REFUSED = "refused"  # the model (or the endpoint's filter) declined to answer
    MALFORMED = "malformed"  # the reply could not be read (bad JSON, no text), twice
    OUT_OF_CHOICE = "out_of_choice"  # the reply named something that is not a choice, twice
    TIE = "tie"  # a local model scored two choices the same: no guess is made
    ERROR = "error"  # the endpoint failed (time-outs, 5xx, 429 after every retry) for this question

    NO_ANSWER = (REFUSED, MALFORMED, OUT_OF_CHOICE, TIE, ERROR)
    ALL = (ANSWERED, ANSWERED_ON_RETRY, REFUSED, MALFORMED, OUT_OF_CHOICE, TIE, ERROR)


@dataclass(frozen=True)
class ChoiceQuestion:
    """One closed question: `messages` for a chat model, `prompt` (the same text, plain) for a local LM that scores
    each of `choices` as a continuation; `choice_texts` (optional) is what the local LM scores for each choice when
    it differs from the choice's label."""

    messages: tuple[dict[str, str], ...]
    prompt: str
    choices: tuple[str, ...]
    choice_texts: tuple[str, ...] = ()

    def texts(self) -> tuple[str, ...]:
        return self.choice_texts or self.choices

    def cache_text(self) -> str:
        """Everything that determines the answer, canonical: part of the cache key."""
        return json.dumps({"messages": list(self.messages), "prompt": self.prompt, "choices": list(self.choices),
                           "choice_texts": list(self.choice_texts)}, sort_keys=True, ensure_ascii=False)


@dataclass
class ModelReply:
    choice: str | None
    status: str
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests made (retries included); 0 for a local model
    scores: dict[str, float] = field(default_factory=dict)  # log-likelihood per choice (local LM)
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelReply:
        names = cls.__dataclass_fields__
        return cls(**{key: value for key, value in data.items() if key in names})


class ModelBackend(Protocol):
    name: str

    def describe(self) -> dict[str, Any]:
        """The back-end's identity in the cache key and on the run: its name and model (never a secret)."""

    def answer(self, question: ChoiceQuestion) -> ModelReply: ...

    def close(self) -> None: ...


BACKENDS: dict[str, Callable[..., ModelBackend]] = {}


def register(name: str) -> Callable[[Callable[..., ModelBackend]], Callable[..., ModelBackend]]:
    def decorate(factory: Callable[..., ModelBackend]) -> Callable[..., ModelBackend]:
        BACKENDS[name] = factory
        return factory

    return decorate


def cache_key(*, backend: dict[str, Any], question: ChoiceQuestion) -> str:
    """sha256 of (back-end identity, model, prompt): the same question to the same model is asked once."""
    text = json.dumps(backend, sort_keys=True) + "\x1f" + question.cache_text()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
