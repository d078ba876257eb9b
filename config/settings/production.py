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
