"""Development and the zero-setup demo: SQLite and eager Celery unless the environment says otherwise."""
from .base import *  # noqa: F401,F403
from .base import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
