"""annotation.services.answers through the participant JSON API: answers never revealed and mapped back to the
canonical order, idempotent and conflicting answers, answers to expired reservations, and excluding a participant
who fails screening (their slots reopen)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, Response
from annotation.selectors import reservation_expected_answer, reservation_is_screening
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 (fixture)
from tests.helpers import assert_api_error

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("serving_path")]


@pytest.fixture
def client() -> APIClient:
    return APIClient(enforce_csrf_checks=True)

def test_items_never_reveal_answers_and_map_back_to_canonical_order(client):
    study = make_study(per_batch=6, n_instances=6)
    p = P(client, study.slug, "PID-2")
    p.start()
    p.consent()
    for _ in range(6):
        item = p.next().json()["item"]
        reservation = Reservation.objects.get(public_id=item["id"])
        inst = reservation.study_item.instance
        assert item["id"] == reservation.public_id and inst.stel_id not in str(item) and len(item["id"]) >= 16
        swapped = reservation.shown["swapped"]
        assert item["texts"]["sentence_1"] == (inst.sentence_2 if swapped else inst.sentence_1)
        displayed = reservation_expected_answer(public_id=item["id"])
        assert p.answer(item["id"], displayed).status_code == 201
        stored = Response.objects.get(reservation=reservation)
        assert stored.answer == inst.correct_order  # canonical order whatever was displayed
        assert stored.is_correct is True
        assert stored.shown["texts"] == item["texts"]


def test_same_answer_is_idempotent_and_a_different_one_conflicts(client):
    study = make_study()
    p = P(client, study.slug, "PID-3")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    first = p.answer(item["id"], "S1-S2")
    assert first.status_code == 201 and first.json()["stored"] is True
    again = p.answer(item["id"], "S1-S2")
    assert again.status_code == 200 and again.json()["stored"] is False
    other = p.answer(item["id"], "S2-S1")
    assert_api_error(other, code="answer_conflict", status=409)
    assert Response.objects.filter(participant__external_id="PID-3").count() == 1


def test_expired_reservation_is_rejected_and_reopened(client):
    study = make_study(n_instances=2, per_batch=2, k=1)
    p = P(client, study.slug, "PID-6")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    Reservation.objects.filter(batch__token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    Batch.objects.filter(token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    r = p.answer(item["id"], "S1-S2")
    assert_api_error(r, code="expired", status=410)
    assert client.get(f"/api/v1/sessions/{p.token}/").json()["state"] == "expired"
    assert p.next().status_code == 410
    # the slots are free again: with k=1 a second participant gets both items
    q = P(client, study.slug, "PID-7")
    q.start()
    q.consent()
    assert len(q.play()) == 2
    assert Response.objects.filter(participant__external_id="PID-7").count() == 2


def test_screening_failure_excludes_and_reopens_slots(client):
    study = make_study(n_instances=4, per_batch=4, k=1, screening=2)
    bad = P(client, study.slug, "PID-BAD")
    bad.start()
    bad.consent()
    seen = bad.play(fail_screening=True)
    assert len(seen) == 6
    participant = Participant.objects.get(external_id="PID-BAD")
    assert participant.excluded and "screening" in participant.exclusion_reason
    assert not Response.objects.filter(participant=participant, is_valid=True).exists()
    assert bad.next().json()["completion_code"] == "DONE123"  # not told: the batch ends normally
    good = P(client, study.slug, "PID-GOOD")
    good.start()
    good.consent()
    assert len([i for i in good.play() if not reservation_is_screening(public_id=i["id"])]) == 4
    # and the excluded participant gets no new batch, told the same as when a study is full (the client proves it
    # is the participant's own with a token it holds: the shared test client's cookie is PID-GOOD's by now)
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                    {"participant": "PID-BAD", "platform": "prolific", "token": bad.token}, format="json")
    assert_api_error(r, code="no_work_available", status=409)
