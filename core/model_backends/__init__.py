"""Model back-ends: one small interface for asking a language model to choose among fixed answers.

This package imports no Django app (only `core.errors`), so every part of the project can use it: model annotators
(`scoring.model_annotators`) ask it to answer study items; the writing signals ask the same OpenAI-compatible
client (`core.model_backends.openai_chat.OpenAIChatClient.chat`) for free text (a model's own rewrite).

- `ChoiceQuestion`: what is asked (chat messages, the plain-text prompt a local LM continues, the allowed answers).
- `ModelReply`: what came back (the choice or None, why not, tokens, per-choice scores for a local LM).
- `ModelBackend`: `describe()` (what identifies the model in the cache key), `answer(question)`, `close()`.
- `BACKENDS` / `register` (`base.py`) / `backend_create`: the registry, one entry per kind of service
  (`openai`: `openai_chat.py`; `local`: `causal_lm.py`; both cheap to import: a model's libraries load when it runs).
"""
from __future__ import annotations

from typing import Any

from core.error_codes import UNKNOWN_BACKEND
from core.errors import ApplicationError

# The built-in back-ends register themselves in `base.BACKENDS` on import.
from . import causal_lm, openai_chat  # noqa: F401
from .base import BACKENDS, ChoiceQuestion, ModelBackend, ModelReply, ReplyStatus, cache_key, register

__all__ = ["BACKENDS", "ChoiceQuestion", "ModelBackend", "ModelReply", "ReplyStatus", "backend_create", "backend_names",
           "cache_key", "register"]


def backend_names() -> list[str]:
    return sorted(BACKENDS)


def backend_create(name: str, **options: Any) -> ModelBackend:
    """A back-end by its registered name; ApplicationError (field `backend`) for an unknown one."""
    factory = BACKENDS.get(name)
    if factory is None:
        raise ApplicationError(f"Back-end: unknown back-end {name!r} (one of: {', '.join(sorted(BACKENDS))}).",
                               code=UNKNOWN_BACKEND, field="backend")
    return factory(**options)
