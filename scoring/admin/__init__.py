"""Scoring admin, one module per part."""
from . import (  # noqa: F401
    agreement,
    content_errors,
    export,
    job_links,
    metric_evaluation,
    model_annotators,
    model_scoring,
    overview,
)
