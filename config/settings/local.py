"""Development and the zero-setup demo: SQLite and eager Celery unless the environment says otherwise."""
from .base import *  # noqa: F401,F403
from .base import ANNOTATION_SESSION_RATES, env_bool, env_str

DEBUG = env_bool("DJANGO_DEBUG", True)
# The demo's browser and its simulated crowd (`make demo-data`) all come from 127.0.0.1.
ANNOTATION_SESSION_RATES["address"] = env_str("ANNOTATION_SESSION_RATE_PER_ADDRESS", "6000/min")
