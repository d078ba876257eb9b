"""Automatic metrics for rewrites and their meta-evaluation against human Likert ratings.

`base` holds the interface and registry; `lexical`, `neural` and `logprob` the built-in metrics;
`selectors`/`services` the meta-evaluation; `correlation` the statistics; `plots` the admin figure.
"""
from .base import REGISTRY, Metric, MetricItem, metric_names, metrics_resolve

__all__ = ["REGISTRY", "Metric", "MetricItem", "metric_names", "metrics_resolve"]
