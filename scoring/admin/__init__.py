"""Scoring admin, one module per part."""
from . import agreement, metric_evaluation, model_scoring  # noqa: F401
