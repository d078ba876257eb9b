"""Scoring admin, one module per part."""
from . import (  # noqa: F401
    agreement,
    content_errors,
    export,
    metric_evaluation,
    model_annotators,
    model_scoring,
    overview,
)
