"""annotation.services.session_lookup: a session is found by its token only, an unknown or oversized token is a 404,
and a batch past its time limit is expired (its unanswered reservations released) when it is loaded."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Reservation
from annotation.services.session_lookup import batch_expire, session_load
from core.errors import ApplicationError
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("token", ["", "no-such-token", "x" * 65])
def test_an_unknown_token_is_not_found(token):
    make_study(n_instances=1, per_batch=1, k=1)
    with pytest.raises(ApplicationError) as exc:
        session_load(token=token)
    assert exc.value.status == 404


def test_loading_an_overdue_batch_expires_it_and_releases_its_items():
    study = make_study(n_instances=2, per_batch=2, k=1)
    p = P(APIClient(), study.slug, "L1")
    p.start()
    p.consent()
    p.client.post(f"/api/v1/sessions/{p.token}/start/", format="json")
    batch = Batch.objects.get(token=p.token)
    assert session_load(token=p.token).state == Batch.State.ITEMS
    Batch.objects.filter(pk=batch.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert session_load(token=p.token).state == Batch.State.EXPIRED
    assert not Reservation.objects.filter(batch=batch, released=False).exists()


def test_batch_expire_leaves_a_batch_in_time_alone():
    study = make_study(n_instances=1, per_batch=1, k=1)
    p = P(APIClient(), study.slug, "L2")
    p.start()
    p.consent()
    p.client.post(f"/api/v1/sessions/{p.token}/start/", format="json")
    batch = Batch.objects.get(token=p.token)
    assert batch_expire(batch=batch, now=timezone.now()) is False
    assert batch_expire(batch=batch, now=batch.expires_at + timedelta(seconds=1)) is True
    assert Batch.objects.get(pk=batch.pk).state == Batch.State.EXPIRED
