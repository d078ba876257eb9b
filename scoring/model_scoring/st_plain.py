"""A sentence-transformers model of the plain shape, driven by transformers directly on CPU.

The plain shape is a Hugging Face encoder, mean pooling and, optionally, L2 normalization (all-MiniLM-L6-v2 and most
sentence encoders): `modules.json` lists exactly Transformer, Pooling (mean only) and maybe Normalize, without
prompts or lower-casing. For it, `PlainEncoder` runs the same tokenizer, the same model forward and the same pooling
arithmetic as sentence-transformers' modules (`Pooling`'s mean: the unmasked tokens summed in float32 over their
count clamped at 1e-9; `Normalize`: `F.normalize(p=2)`), so the embeddings are the same float32 numbers bit for bit
(tests/scoring/model_scoring/test_st_plain.py compares them) — without importing sentence-transformers, whose import
costs more than torch's and transformers' together (docs/benchmarks.md). Any other shape gives None from
`plain_pipeline`, and sentence-transformers runs the model.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = "sentence_transformers.models.Pooling"
NORMALIZE = "sentence_transformers.models.Normalize"
# Pooling config keys that may be present without changing a plain mean (the others must be false or absent).
POOLING_NEUTRAL = {"word_embedding_dimension", "pooling_mode_mean_tokens", "include_prompt"}


@dataclass(frozen=True)
class PlainPipeline:
    max_seq_length: int
    normalize: bool


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _plain_pooling(config: Any) -> bool:
    if not isinstance(config, dict) or config.get("pooling_mode_mean_tokens") is not True:
        return False
    if config.get("pooling_mode", "mean") != "mean":
        return False
    return not any(value for key, value in config.items() if key not in POOLING_NEUTRAL | {"pooling_mode"})


def plain_pipeline(path: Path) -> PlainPipeline | None:
    """What the model directory's sentence-transformers configuration says, when it is of the plain shape."""
    modules = _json(path / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        return None
    types = [m.get("type") for m in modules]
    if types[:2] != [TRANSFORMER, POOLING] or types[2:] not in ([], [NORMALIZE]) or modules[0].get("path") not in ("",
                                                                                                           "."):
        return None
    config = _json(path / "sentence_bert_config.json")
    if (not isinstance(config, dict) or set(config) - {"max_seq_length", "do_lower_case"}
            or config.get("do_lower_case") or not isinstance(config.get("max_seq_length"), int)):
        return None
    if not _plain_pooling(_json(path / str(modules[1].get("path", "")) / "config.json")):
        return None
    card = _json(path / "config_sentence_transformers.json") or {}
    if not isinstance(card, dict) or card.get("prompts") or card.get("default_prompt_name"):
        return None
    return PlainPipeline(max_seq_length=config["max_seq_length"], normalize=len(modules) == 3)


class PlainEncoder:
    """The tokenizer and the encoder of a plain-shaped model, loaded with transformers (float32, CPU)."""

    def __init__(self, path: Path, pipeline: PlainPipeline) -> None:
        # heavy: transformers (torch) loads only when a model runs
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModel.from_pretrained(path, local_files_only=True).eval()
        # As sentence-transformers' Transformer: max_seq_length, capped at the model's position embeddings.
        limit = getattr(self.model.config, "max_position_embeddings", None)
        self.max_length = min(pipeline.max_seq_length, limit) if isinstance(limit, int) and limit > 0 \
            else pipeline.max_seq_length
        self.normalize = pipeline.normalize

    def lengths(self, sentences: list[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(sentences, truncation=True, max_length=self.max_length)["input_ids"]]

    def embed(self, sentences: list[str]) -> np.ndarray:
        """One float32 embedding per sentence (call inside `torch.inference_mode()`)."""
        # heavy: torch loads only when a model runs
        import torch

        features = self.tokenizer(sentences, padding=True, truncation=True, max_length=self.max_length,
                                  return_tensors="pt")
        hidden = self.model(**features).last_hidden_state
        mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        summed = (hidden * mask).sum(dim=1, dtype=torch.float32)
        mean = (summed / torch.clamp(mask.sum(dim=1, dtype=torch.float32), min=1e-9)).to(hidden.dtype)
        if self.normalize:
            mean = torch.nn.functional.normalize(mean, p=2, dim=-1)
        return mean.float().cpu().numpy()
