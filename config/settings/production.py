"""Production: no default secret, PostgreSQL and Redis from the environment."""
import os

from django.core.exceptions import ImproperlyConfigured

if not os.environ.get("DJANGO_SECRET_KEY"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production (config.settings.production).")

from .base import *  # noqa: E402,F401,F403
from .base import env_bool  # noqa: E402

DEBUG = env_bool("DJANGO_DEBUG", False)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)

# Rate limits must be counted in one place for every gunicorn worker: CACHE_URL, else the broker's Redis.
if CACHE_URL is None:  # noqa: F405
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith(("redis://", "rediss://")):
        raise ImproperlyConfigured("Set CACHE_URL (a Redis URL) in production: rate limits need a shared cache.")
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": broker,
                          "KEY_PREFIX": "sc"}}
