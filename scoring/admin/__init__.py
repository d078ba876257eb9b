"""Scoring admin, one module per part."""
from . import agreement, content_errors, export, metric_evaluation, model_annotators, model_scoring  # noqa: F401
