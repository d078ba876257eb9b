"""Scoring models: agreement/filter/export records (agreement.py) and model scoring/metric evaluation (evaluation.py)."""
from .agreement import *  # noqa: F401,F403
from .evaluation import *  # noqa: F401,F403
