"""Scoring models, one module per part: agreement (agreement and filter runs), export, model scoring, metric
evaluation, content errors, model annotators, the model cache; `records` holds the abstract base of the computation
records."""
from .agreement import *  # noqa: F401,F403
from .content_errors import *  # noqa: F401,F403
from .export import *  # noqa: F401,F403
from .metric_evaluation import *  # noqa: F401,F403
from .model_annotators import *  # noqa: F401,F403
from .model_cache import *  # noqa: F401,F403
from .model_scoring import *  # noqa: F401,F403
