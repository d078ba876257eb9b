"""A participant's request whose database connection the database dropped while it ran (a restart, a failover,
`pg_terminate_backend`) is run again on a new connection (at most twice), so a participant never sees a 500 for it.

Django checks a persistent connection before a request reuses it (`conn_health_checks`), but a connection that drops
while a request runs fails that request. On the participant endpoints (core/middleware.py `PARTICIPANT_PATH`) every
request is safe to run twice: a transaction cut off by the drop was rolled back by the database, and what a
participant sends is idempotent where it commits (a session is found again, consent and start are states, an
answer is stored once: the 200 for the same answer, the unique constraint `response_one_per_item`). The hot path's
own statements are retried inside it (annotation/services/hot_path.py); this covers the general ORM path. The
researcher's doors are not retried here: starting a job twice would queue it twice.
"""
from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable
from typing import Any

from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError, connection
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from core.middleware import is_participant_path

logger = logging.getLogger(__name__)


DROPPED = "_stylecrowd_db_failed"
# Runs after the first: a restart drops every connection once; a run again cut off by a second drop (a failover in
# steps, a saturated server whose requests outlast the gap between drops) gets one more.
RUNS_AGAIN = 2


@receiver(got_request_exception)
def _note_database_failure(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    """Marks a request that failed on a database error of the connection kind (a dropped connection, which Django
    may have replaced by the time the 500 is written, so the connection's state afterwards cannot tell; a deadlock
    or serialization failure, whose transaction was rolled back too)."""
    if request is not None and isinstance(sys.exc_info()[1], (OperationalError, InterfaceError)):
        setattr(request, DROPPED, True)


class DroppedConnectionRetryMiddleware:
    """Runs a participant request again (at most RUNS_AGAIN times) when it failed (5xx) because its database
    connection was dropped."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_participant_path(request.path_info) or connection.vendor != "postgresql":
            return self.get_response(request)
        # Read now (at most STYLECROWD_PARTICIPANT_MAX_BODY_BYTES: ParticipantGuardMiddleware runs first), so that
        # a second run reads the same body.
        body = request.body
        response = self.get_response(request)
        for _ in range(RUNS_AGAIN):
            if response.status_code < 500 or not getattr(request, DROPPED, False) or connection.in_atomic_block:
                break
            logger.warning("the database dropped the connection of %s %s; running it once more on a new one",
                           request.method, request.path_info)
            connection.close()
            setattr(request, DROPPED, False)
            request._stream = io.BytesIO(body)  # type: ignore[attr-defined]  # Django's request reads its body here
            request._read_started = False  # type: ignore[attr-defined]
            response = self.get_response(request)
        return response
