"""The LLM-likeness statistic: how predictable a rewrite is to a local causal language model, relative to how
uncertain the model is along the way (a one-model form of Binoculars, Hans et al. 2024):

    log-perplexity  L = mean_i -log p(t_i | t_<i)
    mean entropy    H = mean_i  H(p(. | t_<i))
    score           L / H        (machine text: low; people's text: near or above 1)

Text a model would write itself is predictable token by token (low L) even where the model had many choices (high
H). With one small model this is a weak detector, weaker than the two-model original; it is a prompt for a
reviewer, never a verdict. The model is loaded from a local directory (`local_files_only=True`, never a download);
no model configured: the signal is off.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from core.model_backends.causal_lm import causal_lm_load, device_resolve


def model_dir_check(path: str, *, field: str = "language_model") -> str:
    """An existing local model directory (with a config.json), resolved; ApplicationError otherwise."""
    resolved = Path(str(path)).expanduser()
    if not resolved.is_dir() or not (resolved / "config.json").is_file():
        raise ApplicationError(f"Language model: {path!r} is not a local model directory with a config.json.",
                               field=field)
    return str(resolved.resolve())


def _load(path: str) -> tuple[Any, Any, str]:
    device = device_resolve("auto")
    # Full precision: the thresholds on perplexity and entropy were set on float32 numbers.
    tokenizer, model = causal_lm_load(path, device, half_on_cuda=False)
    return tokenizer, model, device


def _ids(tokenizer: Any, text: str, limit: int) -> list[int]:
    ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])[: limit - 1]
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    # A start token lets the model predict the first word too; a tokenizer with neither starts at the second.
    return ([start] if start is not None else []) + ids


def llm_statistics(texts: list[str], *, path: str, batch_size: int = 16,
                   progress: Callable[[int, int], None] | None = None) -> list[tuple[float, float] | None]:
    """(log-perplexity, mean entropy) per text, in nats; None for a text of fewer than two tokens."""
    # heavy: torch/transformers load only when a model runs
    import torch

    tokenizer, model, device = _load(path)
    limit = int(getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", 512))
    encoded = [_ids(tokenizer, text, limit) for text in texts]
    out: list[tuple[float, float] | None] = [None] * len(texts)
    order = [n for n in sorted(range(len(texts)), key=lambda n: len(encoded[n])) if len(encoded[n]) >= 2]
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            width = max(len(encoded[n]) for n in chunk)
            ids = torch.zeros((len(chunk), width), dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, n in enumerate(chunk):
                ids[row, :len(encoded[n])] = torch.tensor(encoded[n])
                mask[row, :len(encoded[n])] = 1
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits[:, :-1].float()
            log_probs = torch.log_softmax(logits, dim=-1)
            targets = ids[:, 1:].to(device)
            nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            entropy = -(log_probs.exp() * log_probs).sum(-1)
            valid = mask[:, 1:].to(device).float()
            counts = valid.sum(-1)
            for row, n in enumerate(chunk):
                out[n] = (float((nll[row] * valid[row]).sum() / counts[row]),
                          float((entropy[row] * valid[row]).sum() / counts[row]))
            if progress:
                progress(min(start + batch_size, len(order)), len(order))
    return out
