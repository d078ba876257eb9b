"""Production: no default secret, PostgreSQL and Redis from the environment, static files served by WhiteNoise,
HTTPS settings on by default (each can be turned off from the environment, e.g. for a plain-HTTP trial)."""
import os

from django.core.exceptions import ImproperlyConfigured

if not os.environ.get("DJANGO_SECRET_KEY"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production (config.settings.production).")
# Pseudonyms must be stable across restarts and secret: a key from the environment, never a default.
if len(os.environ.get("STYLECROWD_PSEUDONYM_KEY", "")) < 32:
    raise ImproperlyConfigured("STYLECROWD_PSEUDONYM_KEY must be set in production (at least 32 characters, e.g. "
                               "`python -c 'import secrets; print(secrets.token_hex(32))'`): it keys the pseudonyms "
                               "that replace platform ids in exports, and erasure tombstones.")

from .base import *  # noqa: E402,F401,F403
from .base import BASE_DIR, MIDDLEWARE, env_bool, env_list, env_str  # noqa: E402

DEBUG = env_bool("DJANGO_DEBUG", False)

# Static files: `manage.py collectstatic` (or `make collectstatic`) writes hashed, compressed copies to STATIC_ROOT;
# WhiteNoise serves them from the app with far-future cache headers, so no separate web server is needed.
STATIC_ROOT = env_str("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles"))
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                  "whitenoise.middleware.WhiteNoiseMiddleware")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# HTTPS. Behind a proxy that terminates TLS, set DJANGO_SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO (only if the
# proxy overwrites that header: a client could otherwise claim https itself).
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
_proxy_header = env_str("DJANGO_SECURE_PROXY_SSL_HEADER")
SECURE_PROXY_SSL_HEADER = (_proxy_header, "https") if _proxy_header else None
SECURE_HSTS_SECONDS = int(env_str("DJANGO_SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# The health endpoint of a load balancer usually speaks plain HTTP to the app: keep it out of the redirect.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/ping/$"]

# Rate limits must be counted in one place for every gunicorn worker: CACHE_URL, else the broker's Redis.
if CACHE_URL is None:  # noqa: F405
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith(("redis://", "rediss://")):
        raise ImproperlyConfigured("Set CACHE_URL (a Redis URL) in production: rate limits need a shared cache.")
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": broker,
                          "KEY_PREFIX": "sc", "OPTIONS": REDIS_CACHE_OPTIONS}}  # noqa: F405
