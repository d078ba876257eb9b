"""annotation.services.engine: reserving a batch's items (fewest holders first, never more than k holders, one
family per person), releasing expired reservations, and whether a study has work left for a person."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, StudyItem
from annotation.services.engine import (
    batch_reserve,
    reservations_release_expired,
    study_has_work_for,
    study_items_refresh_fill,
)
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db


def _held(item: StudyItem) -> int:
    return Reservation.objects.filter(study_item=item, released=False).count()


def test_a_consented_batch_reserves_its_items_from_the_least_held_first():
    study = make_study(n_instances=4, per_batch=2, k=2)
    first = P(APIClient(), study.slug, "E1")
    first.start()
    first.consent()
    first.client.post(f"/api/v1/sessions/{first.token}/start/", format="json")
    held_by_first = {r.study_item_id for r in Reservation.objects.filter(batch__participant__external_id="E1")}
    assert len(held_by_first) == 2
    second = P(APIClient(), study.slug, "E2")
    second.start()
    second.consent()
    second.client.post(f"/api/v1/sessions/{second.token}/start/", format="json")
    held_by_second = {r.study_item_id for r in Reservation.objects.filter(batch__participant__external_id="E2")}
    # Two items nobody holds come before the two the first person holds.
    assert held_by_second.isdisjoint(held_by_first)
    assert all(_held(item) == 1 for item in StudyItem.objects.filter(study=study))


def test_no_item_ever_gets_more_than_k_holders_and_work_runs_out():
    study = make_study(n_instances=2, per_batch=2, k=2)
    for pid in ("K1", "K2"):
        p = P(APIClient(), study.slug, pid)
        p.start()
        p.consent()
        p.client.post(f"/api/v1/sessions/{p.token}/start/", format="json")
    assert all(_held(item) == 2 for item in StudyItem.objects.filter(study=study))
    late = Participant.objects.create(study=study, platform="prolific", external_id="K3")
    assert study_has_work_for(study=study, participant=late) is False
    batch = Batch.objects.create(study=study, participant=late, token="t-k3", state=Batch.State.ITEMS, number=1)
    with transaction.atomic():
        assert batch_reserve(batch=batch) == 0


def test_expired_reservations_are_released_and_the_fill_recounted():
    study = make_study(n_instances=2, per_batch=2, k=1)
    p = P(APIClient(), study.slug, "X1")
    p.start()
    p.consent()
    p.client.post(f"/api/v1/sessions/{p.token}/start/", format="json")
    later = timezone.now() + timedelta(days=1)
    summary = reservations_release_expired(now=later)
    assert summary["expired_batches"] == 1  # expiring the batch released its two reservations
    assert not Reservation.objects.filter(released=False).exists()
    assert Batch.objects.get(participant__external_id="X1").state == Batch.State.EXPIRED
    study_items_refresh_fill()
    assert set(StudyItem.objects.filter(study=study).values_list("fill", flat=True)) == {0}
    fresh = Participant.objects.create(study=study, platform="prolific", external_id="X2")
    assert study_has_work_for(study=study, participant=fresh) is True
