"""The PostgreSQL hot path of `next` and `answers`: taken for the common case, storing exactly what the general
path stores, and safe against the races the general path's locks guard against."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import psycopg
import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, Response, canonical_answer
from annotation.selectors import reservation_expected_answer, reservation_is_screening
from annotation.services import answers, hot_path, session_creation, sessions
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study


def _consented(pid: str) -> P:
    """A participant of a fresh study (4 instances + 2 screening questions per batch), past consent."""
    study = make_study(screening=2, per_batch=4)
    p = P(APIClient(), study.slug, pid)
    p.start()
    p.consent()
    return p


@pytest.mark.django_db
def test_a_correct_batch_never_reaches_the_general_answer_path(monkeypatch):
    p = _consented("HOT-1")

    def general(**kwargs):
        raise AssertionError("the general answer path was used for a common answer")

    monkeypatch.setattr(answers, "_answer_locked", general)
    seen = p.play()
    assert len(seen) == 6
    batch = Batch.objects.get(token=p.token)
    assert batch.state == Batch.State.COMPLETED and batch.finished_at is not None
    assert Response.objects.filter(batch=batch, is_valid=True).count() == 6


@pytest.mark.django_db
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
def test_stored_rows_record_what_was_shown_and_when(fast, settings):
    settings.ANNOTATION_HOT_PATH = fast
    p = _consented(f"ROWS-{fast}")
    client = p.client
    answered = []
    while True:
        body = p.next().json()
        if body["item"] is None:
            break
        item = body["item"]
        displayed = reservation_expected_answer(public_id=item["id"])  # as the participant sees the item
        canonical = canonical_answer(shown=Reservation.objects.get(public_id=item["id"]).shown, displayed=displayed)
        response = client.post(f"/api/v1/sessions/{p.token}/answers/", {"item": item["id"], "answer": displayed},
                               format="json")
        assert response.status_code == 201, response.content
        assert response.json()["progress"]["done"] == len(answered) + 1
        answered.append((item["id"], canonical))
    batch = Batch.objects.get(token=p.token)
    previous = batch.started_at
    for public_id, canonical in answered:
        reservation = Reservation.objects.get(public_id=public_id)
        row = Response.objects.get(reservation=reservation)
        assert row.answer == canonical and row.is_correct is True and row.is_valid
        assert row.shown == reservation.shown and row.batch_id == batch.pk and row.batch_number == batch.number
        assert row.is_screening == reservation_is_screening(public_id=public_id)
        assert row.study_item_id == reservation.study_item_id
        assert row.screening_question_id == reservation.screening_question_id
        assert row.answered_at == reservation.answered_at
        # Shown when `next` served it (after the previous answer), measured on the server's clock; the client sent
        # no `seconds`, so none is stored.
        assert row.shown_at == reservation.shown_at == reservation.served_at
        assert previous <= reservation.served_at <= row.answered_at
        assert row.server_seconds == pytest.approx((row.answered_at - row.shown_at).total_seconds(), abs=1e-3)
        assert row.seconds is None
        previous = row.answered_at
    assert batch.state == Batch.State.COMPLETED


@pytest.mark.django_db
def test_next_of_the_fast_path_equals_the_general_path(settings):
    p = _consented("SAME-NEXT")
    fast = p.next()
    settings.ANNOTATION_HOT_PATH = False
    general = p.next()
    assert fast.status_code == general.status_code == 200
    assert fast["Content-Type"] == "application/json"
    assert fast.json() == general.json() and fast.json()["item"] is not None
    settings.ANNOTATION_HOT_PATH = True
    p.play()  # to the end: the last answer completes the batch
    fast = p.next()
    settings.ANNOTATION_HOT_PATH = False
    general = p.next()
    assert fast.json() == general.json()
    assert fast.json()["item"] is None and fast.json()["completion_code"] == "DONE123"
    assert fast.json()["redirect_url"] == "https://app.prolific.com/submissions/complete?cc=DONE123"


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_an_exclusion_racing_fast_answers_leaves_no_valid_response():
    """The admin excludes a participant while their answers are being stored: whatever the interleaving, none of
    their responses stays valid and none of their slots stays held."""
    for round_ in range(4):
        _race_exclusion_against_answers(round_)


def _race_exclusion_against_answers(round_: int) -> None:
    study = make_study(n_instances=10, per_batch=10, k=1, slug=f"race-{round_}")
    token = session_creation.session_create(slug=study.slug, participant_id="racer", platform="prolific").batch.token
    sessions.session_consent(token=token, agree=True)
    sessions.session_start(token=token)
    items = list(Reservation.objects.filter(batch__token=token).order_by("position"))
    barrier = threading.Barrier(2)

    def answer_all() -> None:
        try:
            barrier.wait()
            for reservation in items:
                answer = reservation_expected_answer(public_id=reservation.public_id)
                answers.answer_submit(token=token, item=reservation.public_id, answer=answer)
        finally:
            connections.close_all()

    def exclude() -> None:
        try:
            barrier.wait()
            participant = Participant.objects.select_related("study").get(study=study, external_id="racer")
            answers.participant_exclude(participant=participant, reason="admin: test race")
        finally:
            connections.close_all()

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(answer_all), pool.submit(exclude)]:
            future.result()
    assert Response.objects.filter(study=study, is_valid=True).count() == 0
    assert not Reservation.objects.filter(batch__token=token, released=False).exists()
    # nothing lost either: every answer is stored (as invalid), exactly once
    assert Response.objects.filter(study=study).count() == Reservation.objects.filter(
        batch__token=token, answered_at__isnull=False).count()


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_fast_answer_waits_for_an_exclusion_in_progress():
    """An exclusion runs participant → responses → reservations in one transaction. A fast answer arriving after
    its responses were invalidated but before its reservations are released must not commit a valid response:
    the statement's share lock on the participant makes it wait, and it then finds the participant excluded."""
    from django.db import transaction
    from django.utils import timezone

    study = make_study(n_instances=2, per_batch=2, k=1, slug="excl-lock")
    token = session_creation.session_create(slug=study.slug, participant_id="locked", platform="prolific").batch.token
    sessions.session_consent(token=token, agree=True)
    sessions.session_start(token=token)
    participant = Participant.objects.get(external_id="locked")
    reservation = Reservation.objects.filter(batch__token=token).order_by("position").first()
    answer = reservation_expected_answer(public_id=reservation.public_id)
    invalidated, answered = threading.Event(), threading.Event()
    result: dict[str, object] = {}

    def exclude() -> None:
        try:
            with transaction.atomic():
                Participant.objects.filter(pk=participant.pk).update(excluded=True)
                Response.objects.filter(participant=participant, is_valid=True).update(is_valid=False)
                invalidated.set()
                answered.wait(timeout=1.0)  # the answer is blocked meanwhile (with the lock) or done (without)
                Reservation.objects.filter(participant=participant, released=False).update(
                    released=True, released_at=timezone.now())
        finally:
            connections.close_all()

    def answer_now() -> None:
        try:
            invalidated.wait(timeout=10)
            result["stored"] = answers.answer_submit(token=token, item=reservation.public_id, answer=answer).stored
            answered.set()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(exclude), pool.submit(answer_now)]:
            future.result()
    assert result["stored"] is True  # acknowledged and kept, as every answer is
    row = Response.objects.get(reservation=reservation)
    assert row.is_valid is False  # but never as a valid answer of an excluded participant


@pytest.mark.django_db
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
def test_next_stamps_served_at_once_and_the_answer_keeps_the_client_seconds_only_as_bounded_information(
        fast, settings):
    settings.ANNOTATION_HOT_PATH = fast
    p = _consented(f"SERVED-{fast}")
    item = p.next().json()["item"]
    first = Reservation.objects.get(public_id=item["id"]).served_at
    assert first is not None
    assert p.next().json()["item"]["id"] == item["id"]  # the same item again: served_at keeps the first serve
    assert Reservation.objects.get(public_id=item["id"]).served_at == first
    answer = reservation_expected_answer(public_id=item["id"])
    r = p.client.post(f"/api/v1/sessions/{p.token}/answers/", {"item": item["id"], "answer": answer, "seconds": 1e308},
                      format="json")
    assert r.status_code == 201, r.content
    row = Response.objects.get(reservation__public_id=item["id"])
    assert row.seconds == answers.MAX_CLIENT_SECONDS  # bounded: kept as information, never trusted
    assert row.server_seconds < 5 and row.shown_at == first
    item = p.next().json()["item"]
    for bad in ("-1", '"fast"', "1e400", "true"):  # 1e400 parses as infinity: written as raw JSON text
        r = p.client.post(f"/api/v1/sessions/{p.token}/answers/",
                          f'{{"item": "{item["id"]}", "answer": "S1-S2", "seconds": {bad}}}',
                          content_type="application/json")
        assert r.status_code == 400 and "seconds" in r.json()["error"]["details"], (bad, r.content)
    assert not Response.objects.filter(reservation__public_id=item["id"]).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
def test_the_first_answer_extends_a_batch_from_its_grace_period_to_its_time_limit(fast, settings):
    settings.ANNOTATION_HOT_PATH = fast
    p = _consented(f"GRACE-{fast}")
    study = Batch.objects.get(token=p.token).study
    study.first_answer_grace_seconds = 120
    study.save(update_fields=["first_answer_grace_seconds"])
    item = p.next().json()["item"]
    batch = Batch.objects.get(token=p.token)
    grace_end = batch.started_at + timedelta(seconds=120)
    assert batch.expires_at == grace_end
    assert set(Reservation.objects.filter(batch=batch).values_list("expires_at", flat=True)) == {grace_end}
    r = p.answer(item["id"], reservation_expected_answer(public_id=item["id"]))
    assert r.status_code == 201, r.content
    batch.refresh_from_db()
    limit = batch.started_at + timedelta(minutes=study.batch_time_limit_minutes)
    assert batch.expires_at == limit
    assert set(Reservation.objects.filter(batch=batch, answered_at__isnull=True).values_list(
        "expires_at", flat=True)) == {limit}


@pytest.mark.django_db
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
def test_the_answer_carries_what_next_would_answer_one_request_per_item(fast, settings):
    """The browser's flow: one `next` to start, then each answer's `next`. It is exactly what `next` answers right
    after (a reload resumes on the same item with the same `served_at`), the served item's time starts when the
    answer that served it was stored, and the last answer carries the completion code."""
    settings.ANNOTATION_HOT_PATH = fast
    p = _consented(f"ONE-{fast}")
    body = p.next().json()
    previous = Batch.objects.get(token=p.token).started_at
    seen = []
    while body["item"] is not None:
        item = body["item"]
        seen.append(item["id"])
        assert "swapped" not in item and "correct" not in str(item).lower()  # the answer key stays on the server
        reservation = Reservation.objects.get(public_id=item["id"])
        assert previous <= reservation.served_at  # stamped when served, by the answer that served it
        r = p.answer(item["id"], reservation_expected_answer(public_id=item["id"]))
        assert r.status_code == 201, r.content
        body = r.json()["next"]
        row = Response.objects.get(reservation=reservation)
        assert row.shown_at == reservation.served_at and row.server_seconds >= 0
        if body["item"] is not None:
            served = Reservation.objects.get(public_id=body["item"]["id"]).served_at
            # Its time starts when this answer served it: in the answer's own statement on the fast path, right after
            # the answer's commit on the general one.
            assert served == row.answered_at if fast else row.answered_at <= served
            assert p.next().json() == body  # a reload: the same item, the same body, the first stamp kept
            assert Reservation.objects.get(public_id=body["item"]["id"]).served_at == served
        previous = row.answered_at
    assert len(seen) == 6 and len(set(seen)) == 6
    assert body["state"] == "completed" and body["completion_code"] == "DONE123"
    assert body["redirect_url"] == "https://app.prolific.com/submissions/complete?cc=DONE123"
    assert body == p.next().json()
    # The same answer again: 200, stored once, and the same `next` (here: the batch's end).
    again = p.answer(seen[-1], reservation_expected_answer(public_id=seen[-1]))
    assert again.status_code == 200 and again.json()["stored"] is False and again.json()["next"] == body


@pytest.mark.django_db
def test_the_answers_next_is_the_same_on_both_paths(settings):
    """The fast path's `next` (built in the answer's statement) equals the general path's (the ORM `next`)."""
    bodies = {}
    study = make_study(screening=2, per_batch=4)
    for fast in (True, False):
        settings.ANNOTATION_HOT_PATH = fast
        p = P(APIClient(), study.slug, f"SAME-ANSWER-{fast}")
        p.start()
        p.consent()
        item = p.next().json()["item"]
        r = p.answer(item["id"], reservation_expected_answer(public_id=item["id"]))
        following = r.json()["next"]
        assert r["Content-Type"] == "application/json" and following == p.next().json()
        following["item"].pop("id")
        following["item"]["texts"] = sorted(following["item"]["texts"])  # different draws, same keys
        bodies[fast] = {k: v for k, v in following.items() if k != "expires_at"}
        bodies[fast]["item"].pop("position")
    assert bodies[True] == bodies[False]


@pytest.mark.django_db
def test_an_answer_whose_next_needs_the_general_path_still_carries_it(settings):
    """A reservation stored without its public JSON (made before `public_item` existed): the fast answer stores the
    answer and the general `next` serves the item, in the same response."""
    p = _consented("LEGACY-NEXT")
    item = p.next().json()["item"]
    batch = Batch.objects.get(token=p.token)
    Reservation.objects.filter(batch=batch).exclude(public_id=item["id"]).update(public_item={})
    r = p.answer(item["id"], reservation_expected_answer(public_id=item["id"]))
    assert r.status_code == 201
    following = r.json()["next"]
    assert following["item"] is not None and following["item"]["id"] != item["id"]
    assert following["progress"] == {"done": 1, "total": 6}
    assert Reservation.objects.get(public_id=following["item"]["id"]).served_at is not None


def _database_drops_the_connection() -> None:
    """The database ends this process's connection, as a restart or `pg_terminate_backend` does (asked on a second
    connection to the same database)."""
    db = connection.settings_dict
    pid = connection.connection.info.backend_pid
    with psycopg.connect(dbname=db["NAME"], user=db["USER"], host=db["HOST"] or "127.0.0.1",
                         port=db["PORT"] or 5432, password=db.get("PASSWORD") or None, autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)


@pytest.mark.django_db(transaction=True)  # the connection is dropped: no test transaction to keep
def test_a_connection_the_database_dropped_is_replaced_and_the_statement_sent_once_more():
    p = _consented("DROP-1")
    item = p.next().json()["item"]
    expected = reservation_expected_answer(public_id=item["id"])
    _database_drops_the_connection()
    body = hot_path.next_fast(token=p.token)  # today: OperationalError, a 500 for the participant
    assert body is not None and item["id"] in body.decode()
    _database_drops_the_connection()
    stored = hot_path.answer_fast(token=p.token, item=item["id"], answer=expected, seconds=3.0)
    assert stored is not None and stored["stored"] and stored["progress"]["done"] == 1
    # Sent again (its answer lost): nothing more is stored; the general path answers the idempotent 200.
    assert hot_path.answer_fast(token=p.token, item=item["id"], answer=expected, seconds=3.0) is None
    assert p.answer(item["id"], expected).status_code == 200
    assert Response.objects.filter(reservation__public_id=item["id"]).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_statement_error_on_a_live_connection_is_not_sent_again(monkeypatch):
    p = _consented("DROP-2")
    sent = []
    original = hot_path._execute_once

    def failing(sql, params):
        sent.append(sql)
        return original("SELECT 1/0", {})

    monkeypatch.setattr(hot_path, "_execute_once", failing)
    with pytest.raises(Exception, match="division by zero"):
        hot_path.next_fast(token=p.token)
    assert len(sent) == 1
