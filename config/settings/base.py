"""Settings shared by every environment, read from environment variables through one reader."""
from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
SHARED_DATA_DIR = Path(os.environ.get("STYLECROWD_SHARED_DATA", BASE_DIR.parent / "shared" / "data"))
FIXTURE_DIRS = [BASE_DIR / "fixtures"]  # `loaddata screening_questions` finds fixtures/screening_questions.json


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


SECRET_KEY = env_str("DJANGO_SECRET_KEY", "insecure-dev-key-only-for-the-local-demo")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "core.apps.StyleCrowdAdminConfig",  # django.contrib.admin, named StyleCrowd, apps in pipeline order
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc assets served from our own static files (no CDN)
    "axes",  # login throttling: admin login and the API's Basic auth
    "core",
    "tasks",
    "annotation",
    "platforms",
    "scoring",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into its 429 answer
]
# Participant endpoints: bodies over this many bytes get a JSON 413 before anything reads them, and every error
# there (a 500 included) has the documented JSON shape (core/middleware.py).
MIDDLEWARE.insert(1, "core.middleware.ParticipantGuardMiddleware")
# …and a participant request whose database connection was dropped while it ran is run once more (core/db_retry.py).
MIDDLEWARE.insert(2, "core.db_retry.DroppedConnectionRetryMiddleware")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'demo.sqlite3'}"),
        conn_max_age=int(env_str("DJANGO_CONN_MAX_AGE", "0")),
        # A persistent connection is checked before each request reuses it: after a database restart the next
        # request opens a fresh connection instead of answering a 500 on every thread.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The demo serves a browser and a simulated crowd at once: take the write lock when a transaction begins (so
    # SQLite waits for it instead of failing with "database is locked") and let readers run beside the writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=30, transaction_mode="IMMEDIATE", init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
# Participant pages and the annotator API speak the study's language (Study.language): the catalogs under locale/
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
MEDIA_ROOT = Path(env_str("STYLECROWD_MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"
# Folders whose files the web doors (admin, API) may read by server path: score runs' benchmark files and model
# directories. os.pathsep-separated; the CLI is not limited.
STYLECROWD_DATA_DIRS = [Path(p) for p in env_str("STYLECROWD_DATA_DIRS", os.pathsep.join(
    [str(SHARED_DATA_DIR), str(MEDIA_ROOT)])).split(os.pathsep) if p]
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024  # researchers' uploads; participant bodies: the limit below
PARTICIPANT_MAX_BODY_BYTES = int(env_str("STYLECROWD_PARTICIPANT_MAX_BODY_BYTES", str(32 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024  # larger uploads stream to a temporary file
STYLECROWD_PAY_CURRENCY = env_str("STYLECROWD_PAY_CURRENCY", "GBP") or "GBP"  # of studies' hourly pay (Prolific: GBP)
# Model outputs (embeddings, token probabilities) kept in the database across runs (scoring/model_cache), at
# most this many MB; 0 switches the cache off.
MODEL_CACHE_MAX_BYTES = int(env_str("STYLECROWD_MODEL_CACHE_MB", "1024") or 0) * 1024 * 1024
# torch's CPU threads for model methods; 0 = the cores idle when the model loads (scoring/model_scoring/neural.py).
TORCH_THREADS = int(env_str("STYLECROWD_TORCH_THREADS", "0") or 0)
# `st:` models with an ONNX graph (onnx/model.onnx) run on ONNX Runtime on CPU ("auto"); "torch" forces torch
# (scoring/model_scoring/st_onnx.py).
ST_RUNTIME = (env_str("STYLECROWD_ST_RUNTIME", "auto") or "auto").lower()
# A local causal language model (a directory) for the rewrites' LLM-likeness signal; empty: that signal is off.
STYLECROWD_WRITING_LM = env_str("STYLECROWD_WRITING_LM", "") or ""
STYLECROWD_UPLOAD_MAX_MB = int(env_str("STYLECROWD_UPLOAD_MAX_MB", "100") or 100)  # one corpus import, all files
# One line of an imported file (one text, one record): longer is refused, naming the file and the line.
STYLECROWD_MAX_LINE_BYTES = int(env_str("STYLECROWD_MAX_LINE_BYTES", str(1024 * 1024)) or 1048576)
STYLECROWD_HUB_TIMEOUT_SECONDS = float(env_str("STYLECROWD_HUB_TIMEOUT_SECONDS", "60") or 60)  # each dataset-hub call

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "core.openapi.AutoSchema",  # request bodies and pagination as validated
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "core.authentication.LockoutBasicAuthentication",  # DRF's Basic auth + the login throttling below
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.ModelPermission"],  # model permissions, as in the admin
    # JSON first: a JSON object's values are held to their documented types (core.parsers.StrictJSONParser); every
    # body, whatever its type, to one rule for depth, NUL characters and numbers (core/json_guard.py).
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser", "core.parsers.GuardedFormParser",
                               "core.parsers.GuardedMultiPartParser"],
    "DEFAULT_PAGINATION_CLASS": "core.pagination.LimitOffsetPagination",  # ?limit / ?offset checked, not replaced
    "PAGE_SIZE": 100,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "StyleCrowd API",
    "DESCRIPTION": "Parallel corpora in, validated style benchmarks out: researcher and annotator endpoints.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/schema/ and /api/docs/ are for staff (signed in to the admin, or Basic auth): the map of every researcher
    # operation is no business of an anonymous visitor or a participant.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No call to validator.swagger.io either: the docs page makes no request outside this server.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # Two `platform` fields with different choices: where a participant comes from, and what a study accepts.
    "ENUM_NAME_OVERRIDES": {
        "ParticipantPlatformEnum": ["prolific", "mturk", "anonymous"],
        "StudyPlatformEnum": ["any", "prolific", "mturk"],
        "SetupEnum": "tasks.models.Setup",
        "CrowdPlatformEnum": "platforms.models.Platform",
        "PlatformStudyStateEnum": "platforms.models.PlatformStudyState",
        "PlatformCallStateEnum": "platforms.models.CallState",
        "BonusPaymentStateEnum": "platforms.models.BonusPaymentState",
        "DecisionKindEnum": "platforms.models.DecisionKind",
        "ExportFormatEnum": "scoring.export.formats.FORMAT_CHOICES",
    },
    # Request and response bodies as separate components: what a client sends (required, non-blank) is not what
    # it reads back (read-only fields).
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.openapi.errors_and_tags"],
}

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins from one address, the admin login and the
# API's Basic auth answer 429 until the cool-off has passed (a success resets the count). Attempts are kept in the
# database, so the limit holds across gunicorn workers, and listed in the admin.
AUTHENTICATION_BACKENDS = [
    "core.authentication.LoginThrottleBackend",  # django-axes' lock-out check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(env_str("DJANGO_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(env_str("DJANGO_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
AXES_CLIENT_IP_CALLABLE = "core.middleware.client_address"
# Proxies in front of gunicorn that append the client's address to X-Forwarded-For (nginx: 1); 0 trusts REMOTE_ADDR.
TRUSTED_PROXY_COUNT = int(env_str("DJANGO_TRUSTED_PROXY_COUNT", "0"))
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "core.middleware.login_lockout_response"
AXES_VERBOSE = False

# Celery: without a broker URL the demo runs tasks eagerly in-process; tests, CI and production use Redis.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
if CELERY_BROKER_URL is None:
    CELERY_BROKER_URL = "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Every queue a worker must serve: a one-machine install runs `celery -A config worker -Q default,gpu` (README).
CELERY_QUEUE_NAMES = (CELERY_TASK_DEFAULT_QUEUE, "gpu")
# Only work that loads a model goes to the gpu queue, and whether it does is decided per job by its start service
# from the job's parameters, not by the task's name: score_run_start (a method that loads a model),
# metric_evaluation_start (a model metric), model_run_start (a local model; an endpoint only waits on HTTP),
# writing_signals_start (a language model). The queue is stored on the job, so a resend keeps it; a lexical score
# run, agreement, filters and exports stay on the default queue.
CELERY_TASK_ROUTES: dict[str, dict[str, str]] = {}
CELERY_BEAT_SCHEDULE = {
    # Tidies sessions whose time limit passed (the engine already ignores expired reservations without it).
    "annotation-release-expired": {"task": "annotation.release_expired_reservations", "schedule": 60.0},
    # Sends again (or fails, with the reason) jobs whose worker died, long before the visibility timeout.
    "core-jobs-reap-stale": {"task": "core.jobs_reap_stale", "schedule": 30.0},
    # Measures the writing signals of active rewrite studies with new rewrites, so the review queue shows the flags.
    "annotation-writing-signals-refresh": {"task": "annotation.writing_signals_refresh", "schedule": 300.0},
    # Refits the posterior stopping parameters of adaptive studies with a posterior stop (tasks/stel/posterior.py).
    "scoring-posterior-refit": {"task": "scoring.posterior_refit", "schedule": 300.0},
}
# Jobs that end (core/job_health.py): a running job's worker stamps a heartbeat; without one for STALE seconds the
# job is sent again, at most MAX_ATTEMPTS deliveries in all, then failed with the reason. TIME_LIMITS per job kind
# (seconds; "default" for the rest).
STYLECROWD_JOB_HEARTBEAT_SECONDS = float(env_str("STYLECROWD_JOB_HEARTBEAT_SECONDS", "10") or 10)
STYLECROWD_JOB_STALE_SECONDS = float(env_str("STYLECROWD_JOB_STALE_SECONDS", "60") or 60)
STYLECROWD_JOB_MAX_ATTEMPTS = int(env_str("STYLECROWD_JOB_MAX_ATTEMPTS", "3") or 3)
# A job whose message has not left this long (the broker away, the sender lost after the commit) is sent by the
# reaper (core/job_health.py `jobs_send_unsent`, every 30 s).
STYLECROWD_JOB_UNSENT_GRACE_SECONDS = float(env_str("STYLECROWD_JOB_UNSENT_GRACE_SECONDS", "10") or 10)
STYLECROWD_JOB_TIME_LIMITS = {"default": 24 * 3600, "corpus_import": 6 * 3600, "instances_generate": 6 * 3600}
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}

# The participant hot path (annotation/services/hot_path.py): `next` and `answers` in one prepared PostgreSQL
# statement each. ANNOTATION_HOT_PATH=0 sends every request through the general ORM path (same answers, more
# queries); SQLite (the demo) always takes the general path.
ANNOTATION_HOT_PATH = env_bool("ANNOTATION_HOT_PATH", True)

if DATABASES["default"]["ENGINE"].endswith("postgresql") and env_str("DJANGO_DB_PREPARE", "1") == "1":
    # The ORM binds parameters on the client and never prepares. The participant hot path
    # (annotation/services/hot_path.py) prepares its few statements explicitly, once per connection, which needs a
    # threshold set. DJANGO_DB_PREPARE=0 turns that off (for a pooler in transaction mode older than PgBouncer 1.21).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 1_000_000)

# Progress rows are written through a second connection so the admin sees them while a long import or
# computation still holds its own transaction open (PostgreSQL only; see core/jobs.py).
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["progress"] = {**DATABASES["default"]}

# Participation integrity (docs/annotator-api.md, "Who may take part"). A started batch whose first answer has not
# arrived within the grace period gives its items back (a study may set its own); session creation is limited per
# client address and per study ("N/s|min|hour|day"), counted in the shared cache so that the limits hold across
# gunicorn workers. The client address is core.middleware.client_address (TRUSTED_PROXY_COUNT above).
ANNOTATION_FIRST_ANSWER_GRACE_SECONDS = int(env_str("ANNOTATION_FIRST_ANSWER_GRACE_SECONDS", "300"))
# Batches of one study open at once from one client address (started and not overdue, or opened within the grace
# period): a person takes one at a time, a household or a shared network a few; a bot farm no more than this.
# 0: no cap. An in-lab session (a room behind one address) sets it to the room's size (docs/annotator-api.md).
ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS = int(env_str("ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS", "5") or 0)
ANNOTATION_SESSION_RATES = {
    "address": env_str("ANNOTATION_SESSION_RATE_PER_ADDRESS", "20/min"),
    "study": env_str("ANNOTATION_SESSION_RATE_PER_STUDY", "600/min"),
}
REST_FRAMEWORK["NUM_PROXIES"] = TRUSTED_PROXY_COUNT  # DRF's own throttles count the same address
# The shared cache: Redis from CACHE_URL (production and tests); local memory only for the one-process demo.
CACHE_URL = env_str("CACHE_URL") or env_str("REDIS_CACHE_URL")
# Seconds to wait for it: an unreachable Redis must cost a request little (the rate limits then fail open,
# annotation/throttles.py), not the operating system's connect timeout.
CACHE_SOCKET_TIMEOUT = float(env_str("CACHE_SOCKET_TIMEOUT", "2") or 2)
REDIS_CACHE_OPTIONS = {"socket_connect_timeout": CACHE_SOCKET_TIMEOUT, "socket_timeout": CACHE_SOCKET_TIMEOUT}
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL,
                "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "sc"), "OPTIONS": REDIS_CACHE_OPTIONS}
    if CACHE_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# Crowd platforms (platforms app; docs/prolific.md, docs/mturk.md). PROLIFIC_API_TOKEN set: a Prolific study uses that
# account without further set-up (PROLIFIC_WORKSPACE_ID / PROLIFIC_PROJECT_ID say where its studies and groups go).
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com")
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN")
PROLIFIC_WORKSPACE_ID = env_str("PROLIFIC_WORKSPACE_ID", "") or ""
PROLIFIC_PROJECT_ID = env_str("PROLIFIC_PROJECT_ID", "") or ""
# Prolific's minimum reward per hour, by the account's currency; a study paying less is refused before anything is
# sent (Prolific's researcher help: £6.00 / $8.00 an hour).
PROLIFIC_MIN_HOURLY_REWARD = {"GBP": "6.00", "USD": "8.00", "EUR": "7.00"}
# MTurk: the requester sandbox unless an account says live; MTURK_ENDPOINT_URL overrides the endpoint.
MTURK_ENDPOINT_URL = env_str("MTURK_ENDPOINT_URL", "") or ""
MTURK_HIT_LIFETIME_SECONDS = int(env_str("MTURK_HIT_LIFETIME_SECONDS", str(7 * 24 * 3600)) or 604800)
MTURK_AUTO_APPROVAL_DELAY_SECONDS = int(env_str("MTURK_AUTO_APPROVAL_DELAY_SECONDS", str(3 * 24 * 3600)) or 259200)
# The public address participants reach this server at (https://crowd.example.org): the platform's study links to
# <it>/s/<slug>/. Without it, publishing asks for a base URL.
STYLECROWD_PUBLIC_URL = env_str("STYLECROWD_PUBLIC_URL", "") or ""
# Key (Fernet) that encrypts platform tokens and webhook secrets stored in the database.
STYLECROWD_ENCRYPTION_KEY = env_str("STYLECROWD_ENCRYPTION_KEY", "") or ""
# Other addresses a platform token may be sent to (comma-separated origins), e.g. a staging API; by default a Prolific
# token goes only to PROLIFIC_API_URL and MTurk requests only to AWS's endpoints.
PLATFORM_ALLOWED_API_URLS = env_list("PLATFORM_ALLOWED_API_URLS", [])
# Where model back-ends and writing-signals rewrite endpoints may connect (core/outbound.py): comma-separated origins,
# `*` for the host (any host whose every address is public) or the port. Loopback and private addresses (a vLLM on
# this machine or the lab's network) only when listed, e.g. "https://*,http://127.0.0.1:8000".
MODEL_ALLOWED_URLS = env_list("MODEL_ALLOWED_URLS", ["https://*"])
PLATFORM_HTTP_TIMEOUT_SECONDS = float(env_str("PLATFORM_HTTP_TIMEOUT_SECONDS", "30") or 30)
PLATFORM_RETRY_BACKOFF_SECONDS = float(env_str("PLATFORM_RETRY_BACKOFF_SECONDS", "1") or 1)  # 1, 2, 4 s …
PLATFORM_MAX_RETRY_AFTER_SECONDS = float(env_str("PLATFORM_MAX_RETRY_AFTER_SECONDS", "120") or 120)
# A webhook delivery whose timestamp is further than this from the server's clock is refused (replays).
PLATFORM_WEBHOOK_TOLERANCE_SECONDS = int(env_str("PLATFORM_WEBHOOK_TOLERANCE_SECONDS", "300") or 300)
# A webhook body larger than this is refused unread (413) before its signature is checked: Prolific's events are small.
PLATFORM_WEBHOOK_MAX_BODY_BYTES = int(env_str("PLATFORM_WEBHOOK_MAX_BODY_BYTES", str(256 * 1024)) or 262144)
# Webhook events processed (one platform read each) per account: N/s, N/min, N/h; beyond it they wait, stored, and
# the drain below queues them as the rate allows (none is dropped). Empty: no limit.
PLATFORM_WEBHOOK_PROCESS_RATE = env_str("PLATFORM_WEBHOOK_PROCESS_RATE", "60/min") or ""
CELERY_BEAT_SCHEDULE["platforms-webhooks-drain"] = {"task": "platforms.webhooks_drain", "schedule": 60.0}
# The fallback to webhooks: published studies are synced this often by beat.
PLATFORM_SYNC_SECONDS = float(env_str("PLATFORM_SYNC_SECONDS", "300") or 300)
CELERY_BEAT_SCHEDULE["platforms-sync-published"] = {"task": "platforms.sync_published",
                                                     "schedule": PLATFORM_SYNC_SECONDS}

# --- Personal data (docs/data-protection.md) ---------------------------------------------------------------------
# The key of the keyed pseudonyms (HMAC-SHA256) that replace raw platform ids in everything that leaves the
# database: exports, corpora built from rewrites, cards, API bodies for accounts without the personal-data
# permission, erasure tombstones. Production refuses to start without it; the demo generates one (local.py).
STYLECROWD_PSEUDONYM_KEY = env_str("STYLECROWD_PSEUDONYM_KEY", "") or ""
# Who participants write to for withdrawal and erasure; shown in every consent statement.
STYLECROWD_PRIVACY_CONTACT = env_str("STYLECROWD_PRIVACY_CONTACT", "the research team (contact address in the "
                                     "study's description on the recruiting platform)") or ""
# Days after a study is closed and its platform payments are settled before raw ids become pseudonyms and persona
# answers and telemetry detail are deleted (a study's retention_days overrides it).
STYLECROWD_RETENTION_DAYS = int(env_str("STYLECROWD_RETENTION_DAYS", "365") or 365)
# Retention is applied by beat once a day (platforms/services/retention.py; `retention_apply` from the CLI).
CELERY_BEAT_SCHEDULE["platforms-retention-apply"] = {"task": "platforms.retention_apply", "schedule": 24 * 3600.0}
# A combination of persona values held by fewer than this many people is generalised or withheld in a release.
STYLECROWD_K_ANONYMITY = int(env_str("STYLECROWD_K_ANONYMITY", "5") or 5)
