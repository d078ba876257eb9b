"""Tests: PostgreSQL and Redis on localhost (override with DATABASE_URL / CELERY_BROKER_URL / CACHE_URL)."""
import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/stylecrowd")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
# The cache (rate limits) in the broker's Redis database; the limits are generous except where a test sets them.
os.environ.setdefault("CACHE_URL", os.environ["CELERY_BROKER_URL"])
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_ADDRESS", "100000/min")
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_STUDY", "100000/min")

from .base import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

DATABASES.pop("progress", None)  # noqa: F405 - tests see progress only outside transactions
