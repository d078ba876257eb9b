"""The Celery app. Tasks live in each app's `celery_tasks.py` (kept apart from the `tasks` app by name)."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("stylecrowd")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(related_name="celery_tasks")
