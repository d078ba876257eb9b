"""The session-opening rate limits (annotation/throttles.py): counted in the shared Redis cache, and failing open
with a logged warning when that cache is down (exactly-k and one session per participant live in the database)."""
from __future__ import annotations

import logging
import socket

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from annotation import throttles
from annotation.models import Batch, Participant
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released): connections to it are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def cache_down(settings, monkeypatch):  # noqa: ANN001, ANN201 - pytest-django's settings fixture
    """CACHE_URL pointing at a Redis that is not running, as in production during an outage."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0", "KEY_PREFIX": "down",
                                   "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    with pytest.raises(Exception, match="(?i)connect"):
        cache.get("probe")  # the cache really is unreachable
    # Not yet logged by this process (the warning is logged at most once a minute).
    monkeypatch.setattr(throttles, "_last_outage_log", {"at": float("-inf")}, raising=False)
    return settings


def test_sessions_open_while_the_cache_is_down_and_a_warning_is_logged(cache_down, caplog):
    study = make_study(n_instances=4, k=2, per_batch=4)
    client = APIClient()
    with caplog.at_level(logging.WARNING, logger="annotation.throttles"):
        first = P(client, study.slug, "PID-OUTAGE-1")
        assert first.start()["state"] == "consent"
        first.consent()
        assert len(first.play()) == 4  # answers and next work as before
        second = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                             {"participant": "PID-OUTAGE-2", "platform": "prolific"}, format="json")
    assert second.status_code == 201, second.content
    warnings = [r for r in caplog.records if r.name == "annotation.throttles" and r.levelno == logging.WARNING]
    assert warnings and "not counted" in warnings[0].getMessage()
    # The rules in the database still hold without the cache: one session per participant id, exactly k.
    again = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                        {"participant": "PID-OUTAGE-1", "platform": "prolific"}, format="json")
    assert again.status_code in (200, 201, 409)
    assert Participant.objects.filter(external_id="PID-OUTAGE-1").count() == 1
    assert Batch.objects.filter(participant__external_id="PID-OUTAGE-1").count() == 1


def test_the_limit_still_holds_while_the_cache_is_up(settings):
    settings.ANNOTATION_SESSION_RATES = {"address": "2/min", "study": "600/min"}
    cache.clear()
    study = make_study(n_instances=4, k=1, per_batch=1)
    client = APIClient()
    for n in range(2):
        opened = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                             {"participant": f"PID-LIMIT-{n}", "platform": "prolific"}, format="json")
        assert opened.status_code == 201, opened.content
    refused = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                          {"participant": "PID-LIMIT-9", "platform": "prolific"}, format="json")
    assert_api_error(refused, code="throttled", status=429)
    assert int(refused["Retry-After"]) >= 1
