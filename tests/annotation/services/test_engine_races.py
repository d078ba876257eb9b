"""Races against real PostgreSQL: many threads (each its own connection) competing for the last slots.

Transactional tests: every thread commits for real, so the row locks, `skip_locked` and the partial unique
index on (study_item, slot) are what keep the invariant, not the test's own transaction.
"""
from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from annotation.models import Reservation, Response
from annotation.selectors import items_over_capacity, reservation_expected_answer
from annotation.services import answers, session_creation, sessions
from core.errors import ApplicationError
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow,
              pytest.mark.usefixtures("serving_path")]


def _in_thread(fn):
    def run(*args):
        try:
            return fn(*args)
        finally:
            connections.close_all()  # each thread had its own connection
    return run


def _open_session(slug: str, pid: str) -> str | None:
    try:
        batch = session_creation.session_create(slug=slug, participant_id=pid, platform="prolific").batch
        sessions.session_consent(token=batch.token, agree=True)
        sessions.session_start(token=batch.token)
        return batch.token
    except ApplicationError as exc:
        assert exc.code == "no_work_available", exc.message
        return None


def _play(token: str, barrier: threading.Barrier | None = None) -> int:
    stored = 0
    if barrier is not None:
        barrier.wait()
    while True:
        batch, reservation, _ = sessions.session_next(token=token)
        if reservation is None:
            return stored
        answer = reservation_expected_answer(public_id=reservation.public_id)
        stored += answers.answer_submit(token=token, item=reservation.public_id, answer=answer).stored


def test_threads_race_for_the_last_slots_of_one_instance():
    assert connection.vendor == "postgresql"
    study = make_study(n_instances=1, per_batch=1, k=5)
    # four slots are already taken: 24 participants race for the last one
    for i in range(4):
        token = _open_session(study.slug, f"early-{i}")
        assert _play(token) == 1
    barrier = threading.Barrier(24)

    @_in_thread
    def racer(i: int) -> str | None:
        barrier.wait()
        return _open_session(study.slug, f"racer-{i}")

    with ThreadPoolExecutor(24) as pool:
        tokens = [t for t in pool.map(racer, range(24)) if t]
    # session_create may let several in (the study had room), but only one can reserve the slot
    holders = Reservation.objects.filter(study_item__study=study, released=False)
    assert holders.count() == 5
    assert len(set(holders.values_list("slot", flat=True))) == 5
    winners = [t for t in tokens if Reservation.objects.filter(batch__token=t).exists()]
    assert len(winners) == 1
    assert _play(winners[0]) == 1
    assert Response.objects.filter(study=study, is_valid=True).count() == 5
    assert items_over_capacity(study=study) == []


def test_many_participants_playing_concurrently_never_exceed_k_and_lose_nothing():
    study = make_study(n_instances=12, per_batch=4, k=3, screening=2)
    barrier = threading.Barrier(16)
    results: list[tuple[str, int]] = []

    @_in_thread
    def participant(i: int) -> None:
        barrier.wait()
        token = _open_session(study.slug, f"p-{i}")
        if token is not None:
            results.append((token, _play(token)))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(participant, range(16)))
    per_item = Counter(Response.objects.filter(study=study, is_valid=True, is_screening=False)
                       .values_list("study_item_id", flat=True))
    assert max(per_item.values()) <= 3
    assert sum(per_item.values()) == 12 * 3  # 16 people × 4 items > 36 slots: every slot filled exactly once
    # no answer lost: every 201 is a stored row, one per answered reservation
    assert sum(n for _, n in results) == Response.objects.filter(study=study).count()
    assert Response.objects.filter(study=study).count() == Reservation.objects.filter(
        batch__study=study, answered_at__isnull=False).count()
    assert items_over_capacity(study=study) == []


def test_late_answers_race_with_a_reserver_taking_over_expired_slots():
    """Expired reservations are answered while other participants reserve the same slots: whoever wins, the
    item never ends with more than k valid responses."""
    study = make_study(n_instances=6, per_batch=6, k=1)
    late = _open_session(study.slug, "late")
    served = []
    for _ in range(6):
        _, reservation, _ = sessions.session_next(token=late)
        served.append(reservation.public_id)
        # answer only after expiry: simulate by moving the deadline to "just now" below
    Reservation.objects.filter(batch__token=late).update(expires_at=timezone.now() + timedelta(milliseconds=300))
    barrier = threading.Barrier(7)

    @_in_thread
    def late_answers() -> int:
        barrier.wait()
        ok = 0
        for public_id in served:
            try:
                ok += answers.answer_submit(token=late, item=public_id,
                                             answer=reservation_expected_answer(public_id=public_id)).stored
            except ApplicationError as exc:
                assert exc.code == "expired"
        return ok

    @_in_thread
    def newcomer(i: int) -> int:
        barrier.wait()
        import time

        time.sleep(0.3 + 0.05 * i)
        token = _open_session(study.slug, f"new-{i}")
        return _play(token) if token else 0

    with ThreadPoolExecutor(7) as pool:
        late_future = pool.submit(late_answers)
        new_futures = [pool.submit(newcomer, i) for i in range(6)]
        stored = late_future.result() + sum(f.result() for f in new_futures)
    per_item = Counter(Response.objects.filter(study=study, is_valid=True).values_list("study_item_id", flat=True))
    assert per_item and max(per_item.values()) == 1
    assert stored == Response.objects.filter(study=study).count()


def test_duplicate_concurrent_answers_store_once():
    study = make_study(n_instances=1, per_batch=1, k=1)
    token = _open_session(study.slug, "dup")
    _, reservation, _ = sessions.session_next(token=token)
    answer = reservation_expected_answer(public_id=reservation.public_id)
    barrier = threading.Barrier(8)

    @_in_thread
    def send(_: int) -> bool:
        barrier.wait()
        return answers.answer_submit(token=token, item=reservation.public_id, answer=answer).stored

    with ThreadPoolExecutor(8) as pool:
        stored = list(pool.map(send, range(8)))
    assert stored.count(True) == 1 and stored.count(False) == 7
    assert Response.objects.filter(study=study).count() == 1


def test_database_refuses_a_second_holder_of_a_slot():
    """The invariant lives in PostgreSQL too: a buggy writer cannot create two live holders of one slot."""
    from django.db import IntegrityError, transaction

    study = make_study(n_instances=1, per_batch=1, k=2)
    token = _open_session(study.slug, "a")
    original = Reservation.objects.get(batch__token=token)
    other = _open_session(study.slug, "b")
    assert other is not None
    with pytest.raises(IntegrityError), transaction.atomic():
        Reservation.objects.filter(batch__token=other).update(slot=original.slot)


def _process_participant(args: tuple[str, str]) -> int:
    """Runs in a forked process: its own interpreter, its own PostgreSQL connection."""
    slug, pid = args
    connections.close_all()  # never share the parent's socket
    try:
        token = _open_session(slug, pid)
        return _play(token) if token else 0
    finally:
        connections.close_all()


def _in_forked_processes(fn, arguments: list, *, timeout: float = 180.0) -> list:  # noqa: ANN001
    """`fn(argument)` in one forked process per argument, all at once; their results, in order. Plain `os.fork`
    rather than multiprocessing: multiprocessing runs kombu's after-fork cleanup in each child, which closes the
    parent's pooled broker connections and can wait for ever on a reply the parent already read."""
    import os
    import pickle
    import select
    import time

    children = []
    for argument in arguments:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, send the result back, and leave without running the parent's teardown
            os.close(read_end)
            try:
                payload = pickle.dumps(("ok", fn(argument)))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            os._exit(0)
        os.close(write_end)
        children.append((pid, read_end))
    deadline = time.monotonic() + timeout
    results = []
    for pid, read_end in children:
        chunks = []
        with os.fdopen(read_end, "rb") as pipe:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    for other, _ in children:
                        try:
                            os.kill(other, 9)
                        except ProcessLookupError:
                            pass
                    raise AssertionError(f"a forked participant did not finish within {timeout} s")
                chunk = os.read(pipe.fileno(), 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        os.waitpid(pid, 0)
        status, value = pickle.loads(b"".join(chunks))
        assert status == "ok", value
        results.append(value)
    return results


def test_processes_race_for_the_last_slots():
    study = make_study(n_instances=3, per_batch=3, k=2)
    connections.close_all()
    stored = _in_forked_processes(_process_participant, [(study.slug, f"proc-{i}") for i in range(6)])
    assert sum(stored) == 3 * 2  # six processes, six slots: every slot once, no more
    per_item = Counter(Response.objects.filter(study=study, is_valid=True).values_list("study_item_id", flat=True))
    assert sorted(per_item.values()) == [2, 2, 2]
    assert items_over_capacity(study=study) == []
