"""The Celery app. Tasks live in each app's `celery_tasks.py` (kept apart from the `tasks` app by name).

Like config/wsgi.py, a worker without DJANGO_SETTINGS_MODULE runs with the production settings (which refuse to
start without DJANGO_SECRET_KEY), never with the local/DEBUG ones; the demo and the tests set the module."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("stylecrowd")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(related_name="celery_tasks")
