"""Tests: PostgreSQL and Redis on localhost (override with DATABASE_URL / CELERY_BROKER_URL / CACHE_URL)."""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/stylecrowd")
# Redis db 15, never the production default db 0: the worker tests empty their broker database.
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
# The cache (rate limits) in the broker's Redis database; the limits are generous except where a test sets them.
os.environ.setdefault("CACHE_URL", os.environ["CELERY_BROKER_URL"])
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_ADDRESS", "100000/min")
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_STUDY", "100000/min")
# Files a test run writes (exports, plots, uploads) go to a fresh temporary folder, never the checkout's media/;
# the servers and Celery workers a test starts inherit it through the environment.
# The process that made the folder removes it when it exits.
if not os.environ.get("STYLECROWD_MEDIA_ROOT"):
    os.environ["STYLECROWD_MEDIA_ROOT"] = tempfile.mkdtemp(prefix="stylecrowd-test-media-")
    atexit.register(shutil.rmtree, os.environ["STYLECROWD_MEDIA_ROOT"], ignore_errors=True)

from .base import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

DATABASES.pop("progress", None)  # noqa: F405 - tests see progress only outside transactions

# Tests write benchmark files under pytest's tmp_path (in the system's temporary folder).
STYLECROWD_DATA_DIRS = [*STYLECROWD_DATA_DIRS, Path(tempfile.gettempdir())]  # noqa: F405

# `make test-fast` runs in parallel processes (pytest-xdist): each has its own test database (pytest-django adds
# the worker's name), and here its own cache keys and media folder, so that counters and files never meet.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER:
    MEDIA_ROOT = MEDIA_ROOT / XDIST_WORKER  # noqa: F405
    if CACHES["default"].get("KEY_PREFIX") is not None:  # noqa: F405
        CACHES["default"]["KEY_PREFIX"] += f"-{XDIST_WORKER}"  # noqa: F405

# A fixed key: pseudonyms in tests are reproducible across processes (servers and workers a test starts).
STYLECROWD_PSEUDONYM_KEY = os.environ.get("STYLECROWD_PSEUDONYM_KEY") or "test-pseudonym-key-" + "0" * 32
