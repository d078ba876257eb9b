""""A slot is held" is written once (`engine.held_sql`); every statement that decides it derives from it.

Reservations in every state (answered, released, expired, live) are counted three ways that must agree: the
definition as a Python predicate over the rows, the reservers' SQL count (`engine.HELD_SQL`), and what a new
participant is offered (`engine.open_items`: only items with a free slot). The answer claims of both paths (the
hot path's statement and the general path's locked check) are exercised on the same states by the dual-path
tests in services/test_sessions.py and test_hot_path.py.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Participant as ParticipantRow
from annotation.models import Reservation, StudyItem
from annotation.services import engine, hot_path
from tests.annotation.helpers import Participant, make_study

pytestmark = pytest.mark.django_db


def _started(slug: str, pid: str) -> Participant:
    p = Participant(APIClient(), slug, pid)
    p.start()
    p.consent()
    response = p.client.post(f"/api/v1/sessions/{p.token}/start/", {}, format="json")
    assert response.status_code == 200 and response.json()["state"] == "items", response.content
    return p


def _holds(reservation: Reservation, now) -> bool:  # noqa: ANN001
    """The definition in words: not released, and answered or not yet expired."""
    return not reservation.released and (reservation.answered_at is not None or reservation.expires_at > now)


def test_every_holding_count_follows_the_one_definition():
    study = make_study(n_instances=4, per_batch=4, k=2)
    a = _started(study.slug, "HELD-A")
    _started(study.slug, "HELD-B")
    items = list(StudyItem.objects.filter(study=study).order_by("pk"))
    now = timezone.now()
    mine = {r.study_item_id: r for r in Reservation.objects.filter(batch__token=a.token)}
    assert set(mine) == {item.pk for item in items}
    Reservation.objects.filter(pk=mine[items[0].pk].pk).update(answered_at=now)
    Reservation.objects.filter(pk=mine[items[1].pk].pk).update(released=True, released_at=now)
    Reservation.objects.filter(pk=mine[items[2].pk].pk).update(expires_at=now - timedelta(seconds=1))
    # items[3]: live, unanswered; participant B's four reservations: live, unanswered.

    expected = {items[0].pk: 2, items[1].pk: 1, items[2].pk: 1, items[3].pk: 2}
    by_definition = {item.pk: sum(_holds(r, now) for r in Reservation.objects.filter(study_item=item))
                     for item in items}
    assert by_definition == expected
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT i.id, ({engine.HELD_SQL}) FROM annotation_studyitem i WHERE i.study_id = %s",
                       [now, study.pk])
        assert dict(cursor.fetchall()) == expected

    newcomer = Participant(APIClient(), study.slug, "HELD-C")
    newcomer.start()
    participant = ParticipantRow.objects.get(external_id="HELD-C")
    offered = engine.open_items(study=study, participant=participant, now=now, limit=10)
    assert {item_id for item_id, _ in offered} == {items[1].pk, items[2].pk}


def test_the_claims_use_the_definition_text():
    """The fast path's claim is the definition plus "not answered", not a second spelling of it."""
    held = engine.held_sql(alias="r", now="%(now)s")
    assert f"r.answered_at IS NULL AND {held}" in hot_path.ANSWER_WRITE_SQL
    assert engine.held_sql() in engine.HELD_SQL
