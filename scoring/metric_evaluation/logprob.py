"""The style-aware next-token-likelihood metric of "Mind the Style Gap" (Pauli, Augenstein & Assent, 2025).

A local causal LM reads the rewrite after three instruction contexts built from the source sentence:
rewrite-to-style (the item's target style), paraphrase, and repeat. For every rewrite token t_i:

    content preservation  C = mean_i log max(p_style(t_i), p_paraphrase(t_i), p_repeat(t_i))
    style strength        S = mean_i [ p_style(t_i) - max(p_paraphrase(t_i), p_repeat(t_i)) ]

A rewrite token that any context predicts well is content the model expected from the source (C high); one that
only the style instruction makes likely is attributable to the style change (S high).

The prompts are Pauli et al.'s own, from their repository (AmaliePauli/style_transfer_evaluation,
`run_our_likelihood.py`, class `LLMProp`): one system prompt and three user prompts ("Paraphrase the following
sentence: {source}", "Rewrite the following sentence to be {style}: {source}", "Repeat the following sentence:
{source}"), with their renaming of the target styles (layman → "understandable for layman", expert → "addressed to
an expert", simplicity → "simplified"). A model with a chat template (Llama 3 Instruct, as in the paper) gets the
messages through its own template with the assistant turn opened; one without gets "system\nuser\n". The rewrite
is tokenized on its own and appended, so the three contexts score exactly the same rewrite tokens. Two differences
from their script, both kept on purpose: it appends the end-of-turn token to the rewrite and scores it, and its
slice `logits[start:-1]` skips the rewrite's first token; here every rewrite token and nothing else is scored.
The prompts can be overridden per run (`templates` option, keys style/paraphrase/repeat, with `{source}` and, for
style, `{style}` placeholders; `system` for the system prompt) and are stored with every evaluation's params.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.errors import ApplicationError
from core.model_backends.causal_lm import causal_lm_load
from scoring.error_codes import BAD_OPTION

from .base import (
    Metric,
    MetricItem,
    Progress,
    Scores,
    cached_outputs,
    check_model_path,
    model_cache_namespace,
    register,
    resolve_device,
)

# Pauli et al.'s prompts: AmaliePauli/style_transfer_evaluation, run_our_likelihood.py (LLMProp.get_predictions).
SYSTEM_PROMPT = ("You can repeat sentences, paraphrase sentences or rewrite sentences to change the style or certain "
                 "attribute of the text while preserving non-related content and context. Your answers contain just "
                 "the rewrite.")
TEMPLATES: dict[str, str] = {
    "style": "Rewrite the following sentence to be {style}: {source}",
    "paraphrase": "Paraphrase the following sentence: {source}",
    "repeat": "Repeat the following sentence: {source}",
}
# Their renaming of dataset style labels into words a prompt can use (LLMProp.predict).
STYLE_WORDS = {"layman": "understandable for layman", "expert": "addressed to an expert", "simplicity": "simplified"}
CONTEXTS = ("style", "paraphrase", "repeat")
SEPARATOR = "\x00"


def build_contexts(item: MetricItem, templates: dict[str, str]) -> dict[str, str]:
    """Each context as "system prompt SEPARATOR user prompt" (the chat template is the model's, applied at encoding)."""
    style = STYLE_WORDS.get(item.target_style, item.target_style) or "in the target style"
    system = templates.get("system", SYSTEM_PROMPT)
    return {
        "style": system + SEPARATOR + templates["style"].format(source=item.source, style=style),
        "paraphrase": system + SEPARATOR + templates["paraphrase"].format(source=item.source),
        "repeat": system + SEPARATOR + templates["repeat"].format(source=item.source),
    }


def context_text(tokenizer: Any, context: str) -> tuple[str, bool]:
    """The prompt text of a context through the model's chat template (assistant turn opened), or "system\nuser\n"
    for a model without one; and whether the chat template was used."""
    system, _, user = context.partition(SEPARATOR)
    if getattr(tokenizer, "chat_template", None):
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False), True
    return f"{system}\n{user}\n", False


def encode_pair(tokenizer: Any, context: str, rewrite: str) -> tuple[list[int], list[int]]:
    """Token ids of the context and of the rewrite, tokenized apart so every context shares the rewrite ids."""
    text, chat = context_text(tokenizer, context)
    # A chat template carries its own special tokens (Llama 3's <|begin_of_text|>); a plain prompt gets the model's.
    context_ids = tokenizer(text, add_special_tokens=not chat)["input_ids"]
    rewrite_ids = tokenizer(rewrite if chat else " " + rewrite, add_special_tokens=False)["input_ids"]
    return list(context_ids), list(rewrite_ids)


def token_probabilities(
    model: Any, sequences: list[tuple[list[int], list[int]]], *, device: str, batch_size: int, pad_id: int,
    progress: Progress | None = None,
) -> list[list[float]]:
    """For each (context ids, rewrite ids): p(rewrite token i | context, rewrite tokens < i).

    Batches are length-sorted and LEFT-padded with explicit position ids, so every row's rewrite ends at the last
    position and the LM head and the softmax over the vocabulary run only on the last max(rewrite length) + 1
    positions (`logits_to_keep`) instead of the whole sequence — the softmax over a 30-150k vocabulary is most
    of the cost of a small LM on CPU.
    """
    # heavy: torch/transformers load only when a model runs
    import torch

    out: list[list[float]] = [[] for _ in sequences]
    order = sorted(range(len(sequences)), key=lambda n: len(sequences[n][0]) + len(sequences[n][1]))
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            rows = [sequences[n][0] + sequences[n][1] for n in chunk]
            width = max(len(r) for r in rows)
            keep = max(len(sequences[n][1]) for n in chunk) + 1
            ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):
                ids[r, width - len(row):] = torch.tensor(row)
                mask[r, width - len(row):] = 1
            # Real tokens keep positions 0..len-1 whatever the padding, so batched equals unbatched.
            positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
            inputs = {"input_ids": ids.to(device), "attention_mask": mask.to(device),
                      "position_ids": positions.to(device)}
            try:
                logits = model(**inputs, logits_to_keep=keep).logits
            except TypeError:  # a model class without logits_to_keep: keep the tail ourselves
                logits = model(**inputs).logits
            log_probs = torch.log_softmax(logits[:, -keep:].float(), dim=-1)
            for r, n in enumerate(chunk):
                rewrite = sequences[n][1]
                # Kept index j holds the logits after sequence position width - keep + j, which predict the next
                # token; rewrite token k sits at width - len(rewrite) + k.
                first = keep - len(rewrite) - 1
                index = torch.arange(first, first + len(rewrite), device=log_probs.device)
                targets = torch.tensor(rewrite, device=log_probs.device)
                out[n] = log_probs[r, index, targets].exp().tolist()
            if progress:
                progress(len(chunk) / len(CONTEXTS))
    return out


def content_and_style(p_style: list[float], p_paraphrase: list[float], p_repeat: list[float]) -> tuple[float, float]:
    """C and S of one rewrite from its per-token probabilities under the three contexts."""

    n = len(p_style)
    if n == 0:
        return float("nan"), float("nan")
    content = sum(math.log(max(a, b, c)) for a, b, c in zip(p_style, p_paraphrase, p_repeat, strict=True)) / n
    style = sum(a - max(b, c) for a, b, c in zip(p_style, p_paraphrase, p_repeat, strict=True)) / n
    return content, style


@register
class LogprobMetric(Metric):
    name = "logprob"
    needs_model = True
    description = ("Mind the Style Gap: content C and style S from a causal LM under Pauli et al.'s style/paraphrase/"
                   "repeat prompts")

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = check_model_path(self.name, options, None)
        options["device"] = resolve_device(options.get("device"))
        options["batch_size"] = int(options.get("batch_size") or 16)
        templates = {**TEMPLATES, "system": SYSTEM_PROMPT, **(options.get("templates") or {})}
        if set(templates) != {*TEMPLATES, "system"}:
            raise ApplicationError(
                f"logprob templates must be {', '.join(TEMPLATES)} (and system); got {', '.join(sorted(templates))}",
                code=BAD_OPTION,
            )
        for key, text in templates.items():
            if key == "system":
                continue
            if "{source}" not in text:
                raise ApplicationError(f"logprob template {key!r} lacks the {{source}} placeholder", code=BAD_OPTION)
        options["templates"] = templates
        return options

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # One (context, rewrite) text per item and context; the model runs only on those the model cache lacks
        # (the tokenizer is part of the model directory, so the text pair keys the token probabilities).
        pairs = [(context, item.rewrite) for item in items
                 for context in (build_contexts(item, options["templates"])[name] for name in CONTEXTS)]
        keys = [f"{context}\x01{rewrite}" for context, rewrite in pairs]
        distinct = list(dict.fromkeys(keys))

        def compute(missing: list[str]) -> list[list[float]]:
            tokenizer, model = causal_lm_load(options["model_path"], options["device"])
            pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
            sequences = [encode_pair(tokenizer, *key.split("\x01", 1)) for key in missing]
            return token_probabilities(model, sequences, device=options["device"], batch_size=options["batch_size"],
                                       pad_id=pad_id, progress=progress)

        vectors, computed = cached_outputs(namespace=model_cache_namespace("logprob", options), texts=distinct,
                                           compute=compute)
        if progress and len(keys) > computed:
            progress((len(keys) - computed) / len(CONTEXTS))  # the items read from the cache
        by_key = dict(zip(distinct, vectors, strict=True))
        probs = [by_key[key].astype(np.float64).tolist() for key in keys]
        content, style = [], []
        for n in range(len(items)):
            c, s = content_and_style(*probs[3 * n: 3 * n + 3])
            content.append(c)
            style.append(s)
        return {"logprob_content": content, "logprob_style": style}
