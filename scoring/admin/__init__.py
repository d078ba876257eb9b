"""Scoring admin, one module per part."""
from . import agreement, content_errors, metric_evaluation, model_scoring  # noqa: F401
