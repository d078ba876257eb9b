"""The optional model editor: a local causal language model (a path, `local_files_only=True`, never a download)
continues a prompt asking for the rewrite with a content error of one type; the edit recorded is the span where
the model's sentence differs from the good rewrite (common prefix and suffix kept)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.error_codes import MODEL_NOT_FOUND
from core.errors import ApplicationError
from scoring.content_errors.editors import ContentEdit
from scoring.error_codes import MISSING_DEPENDENCY, MODEL_NOT_LOADABLE

PROMPTS = {
    "substitution": "Change one number, name, date or noun so that the meaning is wrong.",
    "deletion": "Leave out one piece of information.",
    "fabrication": "Add one piece of information that is not in the original.",
}


def edit_between(*, good: str, bad: str, error_type: str, rule: str) -> ContentEdit | None:
    """The smallest single span of `good` that, replaced, gives `bad` (None when they are equal)."""
    if good == bad:
        return None
    prefix = 0
    while prefix < min(len(good), len(bad)) and good[prefix] == bad[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(good), len(bad)) - prefix and good[-1 - suffix] == bad[-1 - suffix]:
        suffix += 1
    end_good, end_bad = len(good) - suffix, len(bad) - suffix
    return ContentEdit(error_type, rule, prefix, end_good, good[prefix:end_good], bad[prefix:end_bad])


class ModelEditor:
    """Loads once; `make` is deterministic given the seed (greedy decoding after `torch.manual_seed`)."""

    def __init__(self, *, path: str, max_new_tokens: int = 40) -> None:
        model_dir = Path(path)
        if not model_dir.is_dir():
            raise ApplicationError(f"Model: {path} is not a directory with a saved model.", code=MODEL_NOT_FOUND,
                                   field="model")
        try:
            # heavy: torch/transformers load only when a model runs
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - the models group is installed in tests
            raise ApplicationError("Model: needs transformers (pip install '.[models]').", field="model",
                                   code=MISSING_DEPENDENCY) from exc
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
            self.model: Any = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ApplicationError(f"Model: {path} could not be loaded ({exc}).", code=MODEL_NOT_LOADABLE,
                                   field="model") from exc
        self.model.eval()
        self.name = f"model:{model_dir.name}"
        self.max_new_tokens = max_new_tokens

    def make(self, *, text: str, error_type: str, seed: int) -> ContentEdit | None:
        # heavy: torch/transformers load only when a model runs
        import torch

        prompt = f"{PROMPTS[error_type]}\nOriginal: {text}\nWith the error:"
        inputs = self.tokenizer(prompt, return_tensors="pt")
        torch.manual_seed(seed)
        with torch.no_grad():
            output = self.model.generate(
                **inputs, max_new_tokens=self.max_new_tokens, do_sample=False,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
            )
        generated = self.tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        bad = generated.strip().split("\n")[0].strip()
        if not bad:
            return None
        return edit_between(good=text, bad=bad, error_type=error_type, rule=self.name)
