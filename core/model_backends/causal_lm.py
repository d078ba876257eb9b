"""A local causal language model (transformers, loaded from a directory, never from a hub) that answers a closed
question by the log-likelihood of each choice given the prompt: no sampling, the same answer every time.

For each choice c the score is log p(c | prompt) = the sum over c's tokens of log p(token | prompt, earlier tokens
of c), computed in one forward pass per question (the prompt followed by each choice, right-padded: with a causal
mask the padding after a row never changes that row's earlier positions). The highest score wins; a tie (to 1e-6)
is "no answer", never a guess.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from core.error_codes import EMPTY_CHOICE, INVALID_DEVICE, INVALID_MODEL_DIR, MISSING_MODEL_DIR, NOT_CAUSAL_LM
from core.errors import ApplicationError
from core.model_backends.base import ChoiceQuestion, ModelReply, ReplyStatus, register

TIE = 1e-6


def model_dir_check(model_dir: str) -> Path:
    """The directory of a causal LM saved with `save_pretrained` (config.json naming a *ForCausalLM architecture,
    or a model type transformers maps to one), with its tokenizer; else an ApplicationError naming the problem."""
    path = Path(str(model_dir or "")).expanduser()
    if not str(model_dir or "").strip():
        raise ApplicationError("Model directory: give the directory of a local causal language model.",
                               code=MISSING_MODEL_DIR, field="model_dir")
    if not path.is_dir():
        raise ApplicationError(f"Model directory: {path} is not a directory.", code=INVALID_MODEL_DIR,
                               field="model_dir")
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ApplicationError(f"Model directory: {path} has no config.json (save the model with save_pretrained).",
                               code=INVALID_MODEL_DIR, field="model_dir")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApplicationError(f"Model directory: {config_file} is not valid JSON ({exc}).",
                               code=INVALID_MODEL_DIR, field="model_dir") from None
    architectures = [str(a) for a in (config.get("architectures") or [])]
    if not any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures) and not _causal_type(config):
        found = ", ".join(architectures) or config.get("model_type") or "no architecture"
        raise ApplicationError(f"Model directory: {path} is not a causal language model ({found}); model "
                               "annotators need one that continues text (e.g. *ForCausalLM).",
                               code=NOT_CAUSAL_LM, field="model_dir")
    if not any((path / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json",
                                                    "tokenizer.model")):
        raise ApplicationError(f"Model directory: {path} has no tokenizer files (save the tokenizer beside the "
                               "model).", code=INVALID_MODEL_DIR, field="model_dir")
    return path.resolve()


def _causal_type(config: dict[str, Any]) -> bool:
    # heavy: torch/transformers load only when a model runs
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return bool(config.get("model_type")) and config["model_type"] in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES \
        and not config.get("architectures")


DEVICES = ("auto", "cpu", "cuda")


def device_check(device: str | None) -> str:
    device = device or "auto"
    if device not in DEVICES:
        raise ApplicationError(f"Device: must be auto, cpu or cuda, not {device!r}.", code=INVALID_DEVICE,
                               field="device")
    return device


def device_resolve(device: str) -> str:
    """On the worker that runs the model: auto becomes cuda where there is one."""
    # heavy: torch/transformers load only when a model runs
    import torch

    device = device_check(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ApplicationError("Device: cuda was asked for but this worker has no CUDA device.",
                               code=INVALID_DEVICE, field="device")
    return device


@functools.lru_cache(maxsize=2)
def causal_lm_load(path: str, device: str, *, half_on_cuda: bool = True) -> tuple[Any, Any]:
    """(tokenizer, model) of a local causal LM directory, in eval mode on `device`, never downloading; kept for the
    process (two at most). The one loader: the model back-end, scoring's log-probability metric and the writing
    signals' perplexity all load through it. Half precision on CUDA unless `half_on_cuda=False`."""
    # heavy: torch/transformers load only when a model runs
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    dtype = torch.float16 if device == "cuda" and half_on_cuda else torch.float32
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype).to(device).eval()
    return tokenizer, model


@register("local")
class CausalLMBackend:
    name = "local"

    def __init__(self, *, model_dir: str, device: str = "auto", **_: Any) -> None:
        self.path = model_dir_check(model_dir)
        self.device = device_check(device)  # resolved (auto → cuda/cpu) where the model is loaded
        self._loaded: tuple[Any, Any] | None = None

    def describe(self) -> dict[str, Any]:
        # The directory and its weights' identity: a retrained model in the same folder is a new cache key.
        stamp = sorted((p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in self.path.iterdir()
                       if p.is_file() and p.suffix in (".safetensors", ".bin", ".json"))
        return {"backend": self.name, "model": str(self.path), "files": stamp}

    def check(self) -> dict[str, Any]:
        """Before a run: the directory holds a causal LM and its tokenizer (checked in __init__). The weights are
        loaded by the worker that runs the model (a web process never loads them)."""
        return {"device": self.device}

    def _model(self) -> tuple[Any, Any]:
        if self._loaded is None:
            self.device = device_resolve(self.device)
            try:
                self._loaded = causal_lm_load(str(self.path), self.device)
            except Exception as exc:  # transformers raises many kinds (OSError, ValueError, KeyError)
                raise ApplicationError(f"Model directory: {self.path} could not be loaded as a causal language "
                                       f"model ({type(exc).__name__}: {str(exc)[:200]}).", code=NOT_CAUSAL_LM,
                                       field="model_dir") from None
        return self._loaded

    def scores(self, question: ChoiceQuestion) -> tuple[list[float], int]:
        """log p(choice text | prompt) for every choice, and the prompt's token count."""
        # heavy: torch/transformers load only when a model runs
        import torch

        tokenizer, model = self._model()
        prompt_ids = list(tokenizer(question.prompt, add_special_tokens=True)["input_ids"])
        choice_ids = [list(tokenizer(" " + text, add_special_tokens=False)["input_ids"]) for text in question.texts()]
        if any(not ids for ids in choice_ids):
            raise ApplicationError("a choice's text has no tokens for this tokenizer", code=EMPTY_CHOICE)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        rows = [prompt_ids + ids for ids in choice_ids]
        width = max(len(row) for row in rows)
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            input_ids[r, :len(row)] = torch.tensor(row)
            mask[r, :len(row)] = 1
        with torch.inference_mode():
            logits = model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)).logits
            log_probs = torch.log_softmax(logits.float(), dim=-1)
        out = []
        start = len(prompt_ids)
        for r, ids in enumerate(choice_ids):
            # Token ids[j] sits at position start + j and is predicted by the logits at start + j - 1.
            positions = torch.arange(start - 1, start - 1 + len(ids), device=log_probs.device)
            targets = torch.tensor(ids, device=log_probs.device)
            out.append(float(log_probs[r, positions, targets].sum()))
        return out, len(prompt_ids)

    def answer(self, question: ChoiceQuestion) -> ModelReply:
        values, n_prompt = self.scores(question)
        scores = dict(zip(question.choices, values, strict=True))
        ranked = sorted(values, reverse=True)
        best = max(range(len(values)), key=lambda n: values[n])
        if len(ranked) > 1 and ranked[0] - ranked[1] < TIE:
            return ModelReply(choice=None, status=ReplyStatus.TIE, raw="tie", prompt_tokens=n_prompt,
                              scores=scores, error="two choices scored the same")
        return ModelReply(choice=question.choices[best], status=ReplyStatus.ANSWERED, raw=question.texts()[best],
                          prompt_tokens=n_prompt, scores=scores)

    def close(self) -> None:
        self._loaded = None
