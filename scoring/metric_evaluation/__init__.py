"""Automatic metrics for rewrites and their meta-evaluation against human Likert ratings.

`base` holds the interface and registry; `lexical`, `overlap` (METEOR, ROUGE, character BLEU), `neural`,
`cross_encoder`, `logprob` and `autorater` (LLM-as-autorater) the built-in metrics;
`selectors`/`services` the meta-evaluation; `correlation` the statistics; `plots` the admin figure.
"""
from core.errors import ApplicationError
from scoring.error_codes import NO_METRICS, UNKNOWN_METRIC

# The built-in metrics register themselves on import; they are cheap until a metric runs (their models load then).
from . import autorater, cross_encoder, lexical, logprob, neural, overlap  # noqa: F401
from .base import REGISTRY, Metric, MetricItem

__all__ = ["REGISTRY", "Metric", "MetricItem", "metric_catalogue", "metric_names", "metrics_resolve"]


def metrics_resolve(names: list[str]) -> list[Metric]:
    """Metric objects for the given names, in order, without duplicates; unknown names are an error."""
    cleaned = [name.strip() for name in names if name.strip()]
    if not cleaned:
        raise ApplicationError(f"no metrics given; choose from {', '.join(sorted(REGISTRY))}", code=NO_METRICS)
    unknown = [name for name in cleaned if name not in REGISTRY]
    if unknown:
        raise ApplicationError(
            f"unknown metric(s) {', '.join(unknown)}; known metrics: {', '.join(sorted(REGISTRY))}",
            code=UNKNOWN_METRIC,
        )
    return [REGISTRY[name]() for name in dict.fromkeys(cleaned)]


def metric_names() -> list[str]:
    return sorted(REGISTRY)


def metric_catalogue() -> list[dict[str, object]]:
    """Every metric with what it needs and the languages it supports ("*": any; a model metric's are its model's)."""
    return [{"name": name, "description": REGISTRY[name].description, "languages": list(REGISTRY[name].languages),
             "needs_model": REGISTRY[name].needs_model} for name in sorted(REGISTRY)]
