"""Scoring models, one module per part: agreement/filter/export records, model scoring runs, metric evaluations."""
from .agreement import *  # noqa: F401,F403
from .content_errors import *  # noqa: F401,F403
from .metric_evaluation import *  # noqa: F401,F403
from .model_scoring import *  # noqa: F401,F403
