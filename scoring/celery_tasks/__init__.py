"""Celery tasks of the scoring app, one module per part (autodiscovered as `scoring.celery_tasks`)."""
from .agreement import *  # noqa: F401,F403
from .export import *  # noqa: F401,F403
from .metric_evaluation import *  # noqa: F401,F403
from .model_annotators import *  # noqa: F401,F403
from .model_scoring import *  # noqa: F401,F403
