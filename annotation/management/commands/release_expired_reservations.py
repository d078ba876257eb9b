"""python manage.py release_expired_reservations — what the periodic Celery task does, from the CLI."""
from __future__ import annotations

from typing import Any

from annotation.services.engine import reservations_release_expired
from core.commands import JsonCommand


class Command(JsonCommand):
    help = "Expire overdue batches and release their unanswered reservations (idempotent)."

    def run(self, **options: Any) -> dict[str, Any]:
        return reservations_release_expired()
