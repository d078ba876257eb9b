"""A plain-shaped sentence-transformers model run with ONNX Runtime and the `tokenizers` library: no torch, no
transformers, no sentence-transformers in the process.

sentence-transformers' own convention: a model directory may hold its encoder as an ONNX graph, `onnx/model.onnx`
(what `SentenceTransformer(path, backend="onnx")` loads and what Hugging Face model repositories ship; `manage.py
export_onnx` writes one, checked against torch). When the directory has that graph and a `tokenizer.json`, its
shape is plain (`st_plain.plain_pipeline`: Transformer, mean Pooling, optionally Normalize) and the device is the
CPU, `st:` runs it here: the tokenizer file with sentence-transformers' truncation (`max_seq_length`, capped at the
position embeddings), batches padded to their longest sentence, the graph on ONNX Runtime's CPU provider, then the
same pooling arithmetic in numpy float32 (mean over the unmasked tokens, count clamped at 1e-9; L2 normalization
with norms clamped at 1e-12, as `torch.nn.functional.normalize`).

The embeddings are not bit for bit torch's (another library's kernels sum in another order): they agree to 2.3e-7
on STEL's sentences with the packaged all-MiniLM-L6-v2 (tests/scoring/model_scoring/test_st_onnx.py checks ≤ 1e-5
and the 400 predictions of STEL's work identical), and the model cache keeps them apart from torch's (the runtime is
part of the namespace). `STYLECROWD_ST_RUNTIME=torch` forces the torch path.
"""
from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from .st_plain import PlainPipeline, plain_pipeline

ONNX_FILE = Path("onnx") / "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
ONNX_RUNTIME = "onnxruntime"
TORCH_RUNTIME = "torch"
# Sentences per run on CPU, unless the method was given a batch size: small batches are faster here (MiniLM took 3.9
# CPU seconds for STEL's 402 sentences in batches of 8 and 5.0 in batches of 32, the same embeddings to the last bit).
ONNX_BATCH_SIZE = 8


def st_runtime(path: Path, device: str) -> str:
    """Which runtime `st:<path>` uses on `device`: ONNX Runtime when the directory has `onnx/model.onnx` and
    `tokenizer.json`, the model is of the plain shape, the device is the CPU, onnxruntime is installed and
    `settings.ST_RUNTIME` is not "torch"; else torch. Decided from files alone (nothing is loaded), so a run whose
    embeddings are all cached knows its cache namespace without loading a model."""
    if device != "cpu" or getattr(settings, "ST_RUNTIME", "auto") == TORCH_RUNTIME:
        return TORCH_RUNTIME
    if not (path / ONNX_FILE).is_file() or not (path / TOKENIZER_FILE).is_file():
        return TORCH_RUNTIME
    if plain_pipeline(path) is None or importlib.util.find_spec("onnxruntime") is None:
        return TORCH_RUNTIME
    return ONNX_RUNTIME


def _config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _pad_id(path: Path, tokenizer: Any) -> int:
    """The pad token's id (tokenizer_config.json's pad_token; 0 where there is none). Padded positions are masked, so
    the id changes no embedding; it only keeps the inputs in the vocabulary."""
    try:
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    token = config.get("pad_token") if isinstance(config, dict) else None
    if isinstance(token, dict):
        token = token.get("content")
    found = tokenizer.token_to_id(token) if isinstance(token, str) else None
    return int(found) if found is not None else 0


class OnnxEncoder:
    """The tokenizer file and the ONNX graph of a plain-shaped model (float32, CPU, `threads` intra-op threads)."""

    def __init__(self, path: Path, pipeline: PlainPipeline, *, threads: int) -> None:
        # heavy: onnxruntime and tokenizers load only when a model runs
        import onnxruntime
        from tokenizers import Tokenizer

        limit = _config(path).get("max_position_embeddings")
        # As sentence-transformers' Transformer: max_seq_length, capped at the model's position embeddings.
        self.max_length = min(pipeline.max_seq_length, limit) if isinstance(limit, int) and limit > 0 \
            else pipeline.max_seq_length
        self.tokenizer = Tokenizer.from_file(str(path / TOKENIZER_FILE))
        self.tokenizer.no_padding()  # tokenizer.json may carry fixed-length padding: batches are padded here
        self.tokenizer.enable_truncation(self.max_length)
        self.pad_id = _pad_id(path, self.tokenizer)
        self.normalize = pipeline.normalize
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(path / ONNX_FILE), options,
                                                    providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def tokenize(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids per sentence, special tokens added and truncated at `max_length` (no padding)."""
        return [encoding.ids for encoding in self.tokenizer.encode_batch(list(sentences))]

    def embed_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """One float32 embedding per token-id list (one batch, padded to its longest)."""
        width = max((len(row) for row in ids), default=0)
        input_ids = np.full((len(ids), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for n, row in enumerate(ids):
            input_ids[n, :len(row)] = row
            mask[n, :len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = self.session.run(None, {name: feeds[name] for name in self.inputs})[0].astype(np.float32, copy=False)
        weights = mask[..., None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1, dtype=np.float32)
        mean = summed / np.maximum(weights.sum(axis=1, dtype=np.float32), np.float32(1e-9))
        if self.normalize:
            mean = mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), np.float32(1e-12))
        return mean.astype(np.float32, copy=False)

