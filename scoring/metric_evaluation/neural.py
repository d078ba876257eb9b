"""Model-based similarity metrics: sentence-embedding cosine, BERTScore, mutual NLI entailment.

All load from a local model directory (`model_path`); nothing is downloaded. Models are cached per process so a
Celery worker on the `gpu` queue loads each one once.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ApplicationError
from scoring.error_codes import BAD_MODEL, BAD_OPTION

from .base import (
    Metric,
    MetricItem,
    Progress,
    Scores,
    cached_outputs,
    check_model_path,
    has_reference,
    minilm_path,
    model_cache_namespace,
    reference_column,
    register,
    resolve_device,
)


def _default_minilm_languages(options: dict[str, Any], languages: tuple[str, ...]) -> tuple[str, ...]:
    """The packaged all-MiniLM-L6-v2 is English; another model's languages are its own ("*": not checked)."""
    default = minilm_path()
    if default is not None and options.get("model_path") == str(default.resolve()):
        return ("en",)
    return languages


def _common_options(metric: str, options: dict[str, Any], default: Path | None) -> dict[str, Any]:
    options = check_model_path(metric, options, default)
    options["device"] = resolve_device(options.get("device"))
    batch_size = int(options.get("batch_size") or 32)
    if batch_size < 1:
        raise ApplicationError(f"metric {metric!r}: batch_size must be at least 1", code=BAD_OPTION)
    options["batch_size"] = batch_size
    return options


@functools.lru_cache(maxsize=4)
def _sentence_transformer(path: str, device: str) -> Any:
    # heavy: sentence-transformers (torch) loads only when a model runs
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device, local_files_only=True)


@register
class EmbeddingCosineMetric(Metric):
    name = "embedding_cosine"
    needs_model = True
    description = "cosine of sentence-transformers embeddings (default: packaged all-MiniLM-L6-v2)"

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return _common_options(self.name, options, minilm_path())

    def supported_languages(self, options: dict[str, Any]) -> tuple[str, ...]:
        return _default_minilm_languages(options, self.languages)

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # Every distinct sentence is encoded once, even when it is the source of several systems' rewrites, and a
        # sentence this model encoded before (any run, any metric or score run) comes from the model cache.
        texts = list(dict.fromkeys([t for i in items for t in (i.source, i.rewrite, i.reference) if t]))

        def encode(missing: list[str]) -> Any:
            model = _sentence_transformer(options["model_path"], options["device"])
            return model.encode(missing, batch_size=options["batch_size"], convert_to_numpy=True,
                                show_progress_bar=False)

        rows, _ = cached_outputs(namespace=model_cache_namespace("st", options), texts=texts, compute=encode)
        vectors = np.vstack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        row = {text: n for n, text in enumerate(texts)}

        def cosine(a: str, b: str) -> float:
            return float(vectors[row[a]] @ vectors[row[b]])

        scores: Scores = {f"{self.name}_src": [cosine(i.rewrite, i.source) for i in items]}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items, lambda idx: [cosine(items[i].rewrite, items[i].reference) for i in idx]
            )
        if progress:
            progress(len(items))
        return scores


@functools.lru_cache(maxsize=2)
def _bert_scorer(path: str, num_layers: int, device: str, batch_size: int) -> Any:
    # heavy: bert-score (torch) loads only when the metric runs
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=num_layers, device=device, batch_size=batch_size)


def bertscore_default_layer(path: Path) -> int:
    """bert-score's own recommended layer when the local directory is a model it knows by name (its folder name, or
    the hub name its config records: deberta-xlarge-mnli gives 40, as the paper used it), else the last layer."""
    # heavy: bert-score (torch) loads only when the metric is configured
    from bert_score.utils import model2layers

    config = json.loads((path / "config.json").read_text())
    names = [str(config.get("_name_or_path") or ""), path.name]
    for name in names:
        for known in (name, name.split("/")[-1]):
            matches = [layer for key, layer in model2layers.items() if key == known or key.split("/")[-1] == known]
            if known and matches:
                return int(matches[0])
    return int(config.get("num_hidden_layers") or 1)


@register
class BertScoreMetric(Metric):
    name = "bertscore"
    needs_model = True
    description = ("BERTScore F1 (bert-score package) with a local model; default layer = bert-score's for a model it "
                   "knows by name (deberta-xlarge-mnli: 40), else the model's last")

    def supported_languages(self, options: dict[str, Any]) -> tuple[str, ...]:
        return _default_minilm_languages(options, self.languages)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = _common_options(self.name, options, minilm_path())
        if options.get("num_layers") in (None, ""):
            options["num_layers"] = bertscore_default_layer(Path(options["model_path"]))
        options["num_layers"] = int(options["num_layers"])
        return options

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        scorer = _bert_scorer(options["model_path"], options["num_layers"], options["device"], options["batch_size"])
        _, _, f1 = scorer.score([i.rewrite for i in items], [i.source for i in items])
        scores: Scores = {f"{self.name}_src": [float(v) for v in f1]}
        if has_reference(items):

            def against_reference(idx: list[int]) -> list[float]:
                _, _, f1_ref = scorer.score([items[i].rewrite for i in idx], [items[i].reference for i in idx])
                return [float(v) for v in f1_ref]

            scores[f"{self.name}_ref"] = reference_column(items, against_reference)
        if progress:
            progress(len(items))
        return scores


@functools.lru_cache(maxsize=2)
def _nli_model(path: str, device: str) -> tuple[Any, Any]:
    # heavy: torch/transformers load only when a model runs
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True).to(device).eval()
    return tokenizer, model


def entailment_index(label2id: dict[str, int]) -> int:
    """The entailment class id from the model config's label2id, matched case-insensitively."""
    for label, index in label2id.items():
        if label.lower() == "entailment":
            return int(index)
    raise ApplicationError(
        f"NLI model has no 'entailment' label in config.label2id (labels: {', '.join(label2id)})",
        code=BAD_MODEL,
    )


@register
class NliMutualMetric(Metric):
    name = "nli_mutual"
    needs_model = True
    description = "mean of P(entailment) source→rewrite and rewrite→source (local NLI classifier)"

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = _common_options(self.name, options, None)

        config = json.loads((Path(options["model_path"]) / "config.json").read_text())
        options["entailment_id"] = entailment_index(config.get("label2id") or {})
        return options

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        # heavy: torch/transformers load only when a model runs
        import torch

        tokenizer, model = _nli_model(options["model_path"], options["device"])
        entail = options["entailment_id"]
        pairs = [(i.source, i.rewrite) for i in items] + [(i.rewrite, i.source) for i in items]
        # Length-sorted batches keep padding (and so wasted compute) small.
        order = sorted(range(len(pairs)), key=lambda n: len(pairs[n][0]) + len(pairs[n][1]))
        probs = [0.0] * len(pairs)
        size = options["batch_size"]
        with torch.inference_mode():
            for start in range(0, len(order), size):
                chunk = order[start:start + size]
                encoded = tokenizer(
                    [pairs[n][0] for n in chunk], [pairs[n][1] for n in chunk],
                    padding=True, truncation=True, return_tensors="pt",
                ).to(options["device"])
                logits = model(**encoded).logits.float()
                for n, p in zip(chunk, torch.softmax(logits, dim=-1)[:, entail].tolist(), strict=True):
                    probs[n] = p
                if progress:
                    progress(len(chunk) / 2)
        half = len(items)
        return {self.name: [(probs[n] + probs[half + n]) / 2 for n in range(half)]}
