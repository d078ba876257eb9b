"""Cross-encoder similarity (Babakov et al. 2022's best-performing family): a local sentence-transformers
`CrossEncoder` directory with one output (an STS cross-encoder such as cross-encoder/stsb-roberta-large) reads
(source, rewrite) and (reference, rewrite) pairs together and scores their similarity with the model's own
activation (sigmoid for one label). Models load from a local directory only; nothing is downloaded.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from core.errors import ApplicationError
from scoring.error_codes import BAD_MODEL, BAD_OPTION

from .base import (
    Metric,
    MetricItem,
    Progress,
    Scores,
    check_model_path,
    has_reference,
    reference_column,
    register,
    resolve_device,
)


@functools.lru_cache(maxsize=2)
def _cross_encoder(path: str, device: str) -> Any:
    # heavy: sentence-transformers (torch) loads only when the metric runs
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device=device, local_files_only=True)


@register
class CrossEncoderMetric(Metric):
    name = "cross_encoder"
    needs_model = True
    description = "similarity of a local one-output cross-encoder (sentence-transformers CrossEncoder.predict)"

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        options = check_model_path(self.name, options, None)
        options["device"] = resolve_device(options.get("device"))
        options["batch_size"] = int(options.get("batch_size") or 32)
        if options["batch_size"] < 1:
            raise ApplicationError("metric 'cross_encoder': batch_size must be at least 1", code=BAD_OPTION)
        config = json.loads((Path(options["model_path"]) / "config.json").read_text())
        labels = len(config.get("id2label") or {}) or int(config.get("num_labels") or 1)
        if labels != 1:
            raise ApplicationError(
                f"metric 'cross_encoder' needs a similarity cross-encoder with one output; {options['model_path']} "
                f"has {labels} labels (an NLI model? use nli_mutual)", code=BAD_MODEL, field="cross_encoder_model")
        return options

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        model = _cross_encoder(options["model_path"], options["device"])

        def predict(pairs: list[tuple[str, str]]) -> list[float]:
            values = model.predict(pairs, batch_size=options["batch_size"], show_progress_bar=False)
            return [float(v) for v in values]

        scores: Scores = {f"{self.name}_src": predict([(i.source, i.rewrite) for i in items])}
        if has_reference(items):
            scores[f"{self.name}_ref"] = reference_column(
                items, lambda idx: predict([(str(items[i].reference), items[i].rewrite) for i in idx]))
        if progress:
            progress(len(items))
        return scores
