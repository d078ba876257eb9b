"""Tests: PostgreSQL and Redis on localhost (override with DATABASE_URL / CELERY_BROKER_URL / CACHE_URL)."""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/stylecrowd")
# Redis db 15, never the production default db 0: the worker tests empty their broker database.
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")

# `make test` runs in parallel processes (pytest-xdist). Each one gets its own test database (pytest-django adds the
# worker's name), and here its own Redis database and media folder: the worker tests empty their broker database, and
# a Celery worker a test starts must never take a message another process queued for its own database. Worker n uses
# db (CELERY_BROKER_URL's db - n), counting down so that the default db 15 leaves room for 15 workers above db 0.
# The values go into the environment, which the servers and Celery workers a test starts inherit; those import these
# settings again with PYTEST_XDIST_WORKER still set, and the marker keeps them from moving one database further.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and os.environ.get("STYLECROWD_TEST_ISOLATED_WORKER") != XDIST_WORKER:
    from urllib.parse import urlsplit, urlunsplit

    _broker = urlsplit(os.environ["CELERY_BROKER_URL"])
    _worker_db = int(_broker.path.strip("/") or 0) - int(XDIST_WORKER.removeprefix("gw"))
    if _broker.scheme.startswith("redis"):
        if _worker_db < 1:
            raise RuntimeError(f"xdist worker {XDIST_WORKER} would use Redis db {_worker_db}: run fewer workers or "
                               "point CELERY_BROKER_URL at a higher db (worker n uses its db minus n)")
        _worker_broker = urlunsplit(_broker._replace(path=f"/{_worker_db}"))
        if os.environ.get("CACHE_URL", os.environ["CELERY_BROKER_URL"]) == os.environ["CELERY_BROKER_URL"]:
            os.environ["CACHE_URL"] = _worker_broker
        os.environ["CELERY_BROKER_URL"] = _worker_broker
    if os.environ.get("STYLECROWD_MEDIA_ROOT"):
        os.environ["STYLECROWD_MEDIA_ROOT"] = os.path.join(os.environ["STYLECROWD_MEDIA_ROOT"], XDIST_WORKER)
    os.environ["STYLECROWD_TEST_ISOLATED_WORKER"] = XDIST_WORKER
# The cache (rate limits) in the broker's Redis database; the limits are generous except where a test sets them.
os.environ.setdefault("CACHE_URL", os.environ["CELERY_BROKER_URL"])
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_ADDRESS", "100000/min")
os.environ.setdefault("ANNOTATION_SESSION_RATE_PER_STUDY", "100000/min")
# Test crowds (simulated people, load tests) all come from 127.0.0.1: the open-batch cap per address is lifted
# except where a test sets it (tests/annotation/services/test_participation.py).
os.environ.setdefault("ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS", "100000")
# Files a test run writes (exports, plots, uploads) go to a fresh temporary folder, never the checkout's media/;
# the servers and Celery workers a test starts inherit it through the environment.
# The process that made the folder removes it when it exits.
if not os.environ.get("STYLECROWD_MEDIA_ROOT"):
    os.environ["STYLECROWD_MEDIA_ROOT"] = tempfile.mkdtemp(prefix="stylecrowd-test-media-")
    atexit.register(shutil.rmtree, os.environ["STYLECROWD_MEDIA_ROOT"], ignore_errors=True)

from .base import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

DATABASES.pop("progress", None)  # noqa: F405 - tests see progress only outside transactions

# A test database is thrown away: its commits need not wait for the disk (every transactional test commits, and its
# flush commits again). Merged with any libpq options DATABASE_URL gives (?options=...); PostgreSQL only.
if DATABASES["default"]["ENGINE"].endswith("postgresql"):  # noqa: F405
    _options = DATABASES["default"].setdefault("OPTIONS", {})  # noqa: F405
    _options["options"] = " ".join(filter(None, [_options.get("options"), "-c synchronous_commit=off"]))

# The fake model endpoints the tests start (tests/scoring/fake_openai.py) listen on loopback ports chosen at random:
# listed explicitly, as an operator lists a local vLLM (core/outbound.py).
MODEL_ALLOWED_URLS = [*MODEL_ALLOWED_URLS, "http://127.0.0.1:*"]  # noqa: F405

# Tests write benchmark files under pytest's tmp_path (in the system's temporary folder).
STYLECROWD_DATA_DIRS = [*STYLECROWD_DATA_DIRS, Path(tempfile.gettempdir())]  # noqa: F405

# Parallel processes (see XDIST_WORKER above) also keep their cache keys apart, for a CACHE_URL given explicitly.
if XDIST_WORKER and CACHES["default"].get("KEY_PREFIX") is not None:  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] += f"-{XDIST_WORKER}"  # noqa: F405

# A fixed key: pseudonyms in tests are reproducible across processes (servers and workers a test starts).
STYLECROWD_PSEUDONYM_KEY = os.environ.get("STYLECROWD_PSEUDONYM_KEY") or "test-pseudonym-key-" + "0" * 32
