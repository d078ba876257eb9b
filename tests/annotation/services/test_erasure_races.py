"""Erasure racing arrivals, against real PostgreSQL (the shape of test_engine_races.py): people holding slots in an
open study are erased while newcomers arrive and play in parallel threads, each its own connection, committing for
real; every item ends with exactly k valid answers, never more."""
from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from annotation.models import Participant, Response
from annotation.selectors import items_over_capacity
from core.erasure import participant_erase
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 (fixture)
from tests.annotation.services.test_engine_races import _in_thread, _open_session, _play

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.slow,
              pytest.mark.usefixtures("serving_path")]

K = 3


def test_erasing_slot_holders_while_others_arrive_keeps_exactly_k_per_item():
    assert connection.vendor == "postgresql"
    study = make_study(n_instances=3, per_batch=3, k=K, slug="erase-race")
    holders = [f"H{n:012d}" for n in range(K)]
    tokens = {pid: _open_session(study.slug, pid) for pid in holders}
    assert all(tokens.values())
    _play(tokens[holders[0]])  # one answered everything, the others hold live reservations
    assert _open_session(study.slug, "LATE00000000") is None  # every slot is held

    barrier = threading.Barrier(2 * K)

    @_in_thread
    def erase(pid: str) -> int:
        barrier.wait()
        return len(participant_erase(platform="prolific", external_id=pid, apply=True)["tables"])

    @_in_thread
    def arrive(n: int) -> int:
        barrier.wait()
        stored = 0
        for attempt in range(20):  # arrivals keep coming until the erased slots have been taken
            token = _open_session(study.slug, f"N{n:03d}{attempt:09d}")
            if token is not None:
                stored += _play(token)
        return stored

    with ThreadPoolExecutor(max_workers=2 * K) as pool:
        erased = [pool.submit(erase, pid) for pid in holders]
        arrived = [pool.submit(arrive, n) for n in range(K)]
        assert all(job.result() for job in erased)
        stored = sum(job.result() for job in arrived)

    # whoever arrived too early found no work: late arrivals, one at a time, take what is left
    for n in range(3 * K):
        token = _open_session(study.slug, f"Z{n:012d}")
        if token is None:
            break
        stored += _play(token)
    assert not Participant.objects.filter(external_id__in=holders).exists()
    per_item = Counter(Response.objects.filter(study=study, is_valid=True, is_screening=False)
                       .values_list("study_item_id", flat=True))
    assert sorted(per_item.values()) == [K] * 3, per_item
    assert stored == 3 * K
    assert items_over_capacity(study=study) == []
