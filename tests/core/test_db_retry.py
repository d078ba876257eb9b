"""A participant's request whose database connection the database dropped is run once more (core/db_retry.py): no
500 on the general ORM path, and what it stores is stored once."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Response
from annotation.selectors import reservation_expected_answer
from tests.annotation.helpers import Participant, make_study
from tests.annotation.services.test_hot_path import _database_drops_the_connection

pytestmark = pytest.mark.django_db(transaction=True)  # the connection is dropped: no test transaction to keep


def test_a_participant_request_whose_connection_was_dropped_runs_once_more(settings):
    settings.ANNOTATION_HOT_PATH = False  # every request on the general ORM path
    study = make_study(per_batch=4, slug="retry")
    person = Participant(APIClient(raise_request_exception=False), study.slug, "RETRY-1")
    person.start()
    _database_drops_the_connection()
    consent = person.client.post(f"/api/v1/sessions/{person.token}/consent/", {"agree": True}, format="json")
    assert consent.status_code == 200, consent.content  # today: 500
    _database_drops_the_connection()
    item = person.next().json()["item"]  # reserves the batch's items: a transaction cut off, run again
    expected = reservation_expected_answer(public_id=item["id"])
    _database_drops_the_connection()
    answered = person.answer(item["id"], expected)
    assert answered.status_code == 201, answered.content
    assert answered.json()["progress"]["done"] == 1
    assert Response.objects.filter(reservation__public_id=item["id"]).count() == 1


def test_a_researcher_request_is_not_run_twice(api, settings):
    from django.db import connection

    _database_drops_the_connection()
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(api.handler._force_user)
    assert client.get("/api/v1/studies/").status_code == 500  # not a participant door: not run again
    connection.close()
