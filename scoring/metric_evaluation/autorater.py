"""LLM-as-autorater (Pauli et al. 2025's prompting baseline): an instruction model served behind an
OpenAI-compatible chat endpoint (vLLM, llama.cpp's server, Ollama, a hosted API: the client the model annotators
use, `core/model_backends/openai_chat.py`) rates each rewrite 1–5 for meaning and style.

The prompt and the system message are Pauli et al.'s (AmaliePauli/style_transfer_evaluation,
`run_llamaprompt8b_output.py`, class `Prompt8B`), filled with the target style, the source and the rewrite; their
script's `format` call passes the style twice, so their source slot received the style and their target slot the
source — here each slot gets what its label says. Their post-processing is kept: the number after `"meaning":` and
`"style":` in the reply, and a reply without a readable number counts as the mean of the readable ones. Target
styles are renamed as theirs (layman → "understandable for layman", expert → "addressed to an expert",
simplicity/simplified → "simple").
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

from core.errors import ApplicationError
from core.model_backends.openai_chat import OpenAIChatClient, base_url_check
from scoring.error_codes import BAD_OPTION, LLM_RATER_FAILED

from .base import Metric, MetricItem, Progress, Scores, register

PROMPT = ("Evaluate the following completion of a task where a 'source sentence' has been rewritten to be more {style} "
          "in the style, denoted 'target sentence', Ideally the context and content in the sentence which does not "
          "relate to the style should be preserved. Please evaluate on a Likert scale from 1-5 with 5 being the best: "
          "1) how well the meaning is preserved and 2) how well the the style is changed. Return in JSON format with "
          "the keys 'meaning' , 'style'. Given the 'source sentence': {source} 'target sentence': {rewrite}")
SYSTEM = "You are a helpfull assistant"  # sic, as sent in their script
STYLE_WORDS = {"layman": "understandable for layman", "expert": "addressed to an expert", "simplicity": "simple",
               "simplified": "simple"}
KEYS = ("meaning", "style")


def rating_read(text: str, key: str) -> float | None:
    """The 1–5 rating after `"key":` in a reply (a JSON object or prose around one), else None."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get(key), int | float | str):
            value = float(data[key])
            return value if 1 <= value <= 5 else None
    except ValueError:
        pass
    found = re.search(rf'"{key}"\s*:\s*"?(\d+(?:\.\d+)?)', text)
    if not found:
        return None
    value = float(found.group(1))
    return value if 1 <= value <= 5 else None


def _filled(values: list[float | None]) -> tuple[list[float | None], int]:
    readable = [v for v in values if v is not None]
    if not readable:
        return values, len(values)
    mean = sum(readable) / len(readable)
    return [mean if v is None else v for v in values], len(values) - len(readable)


@register
class LlmRaterMetric(Metric):
    name = "llm_rater"
    description = ("LLM-as-autorater: Pauli et al.'s prompt (meaning and style, 1-5) to an OpenAI-compatible chat "
                   "endpoint (options base_url, model)")

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = dict(options)
        options["base_url"] = base_url_check(str(options.get("base_url") or ""))
        if not str(options.get("model") or "").strip():
            raise ApplicationError("metric 'llm_rater' needs the model's name at the endpoint", code=BAD_OPTION,
                                   field="llm_model")
        options["api_key_env"] = str(options.get("api_key_env") or "OPENAI_API_KEY")
        options["temperature"] = float(options.get("temperature") or 0.0)
        options["max_tokens"] = int(options.get("max_tokens") or 50)  # their max_new_tokens
        options.pop("device", None)
        options.pop("batch_size", None)
        options.pop("model_path", None)
        return options

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        client = OpenAIChatClient(base_url=options["base_url"], api_key=os.environ.get(options["api_key_env"], ""),
                                  timeout=float(options.get("timeout") or 60.0))
        ratings: dict[str, list[float | None]] = {key: [] for key in KEYS}
        try:
            for item in items:
                style = STYLE_WORDS.get(item.target_style, item.target_style) or "different"
                messages = [{"role": "system", "content": SYSTEM},
                            {"role": "user", "content": PROMPT.format(style=style, source=item.source,
                                                                      rewrite=item.rewrite)}]
                reply = client.chat(model=options["model"], messages=messages, temperature=options["temperature"],
                                    max_tokens=options["max_tokens"])
                for key in KEYS:
                    ratings[key].append(rating_read(reply.text, key))
                if progress:
                    progress(1)
        finally:
            client.close()
        content, unreadable_content = _filled(ratings["meaning"])
        style_scores, unreadable_style = _filled(ratings["style"])
        if items and unreadable_content == len(items) and unreadable_style == len(items):
            raise ApplicationError(f"metric 'llm_rater': no reply of {options['model']} at {options['base_url']} "
                                   "held a readable rating", code=LLM_RATER_FAILED)
        return {"llm_rater_content": content, "llm_rater_style": style_scores}
