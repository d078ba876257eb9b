"""Development and the zero-setup demo: SQLite and eager Celery unless the environment says otherwise."""
from .base import *  # noqa: F401,F403
from .base import ANNOTATION_SESSION_RATES, env_bool, env_str

DEBUG = env_bool("DJANGO_DEBUG", True)
# The demo's browser and its simulated crowd (`make demo-data`) all come from 127.0.0.1.
ANNOTATION_SESSION_RATES["address"] = env_str("ANNOTATION_SESSION_RATE_PER_ADDRESS", "6000/min")
ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS = int(env_str("ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS", "100000") or 0)

# The demo's pseudonym key: generated once and kept beside the demo database, so that pseudonyms stay the same across
# the demo's processes (server, commands) and restarts. Production requires STYLECROWD_PSEUDONYM_KEY (production.py).
if not STYLECROWD_PSEUDONYM_KEY:  # noqa: F405
    import secrets as _secrets

    _key_file = BASE_DIR / ".stylecrowd-demo-pseudonym-key"  # noqa: F405
    if not _key_file.exists():
        _key_file.write_text(_secrets.token_hex(32))
    STYLECROWD_PSEUDONYM_KEY = _key_file.read_text().strip()
