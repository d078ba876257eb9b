"""The general (ORM) path's query counts for the three requests of every batch, pinned.

`next` and `answers` normally take the hot path (one prepared statement each, outside Django's query log); the
general path serves every other case and the whole flow when `ANNOTATION_HOT_PATH` is off, so a change that adds a
query per item or per reservation there shows up here as a failing count, not as a slower load benchmark later.
The counts include the savepoints of `transaction.atomic` inside the test's own transaction.
"""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Response
from annotation.selectors import reservation_expected_answer
from annotation.services import hot_path
from annotation.services.rewrites import rewrite_study_create
from annotation.services.study_settings import study_settings_build
from tests.annotation.helpers import Participant, make_study

pytestmark = pytest.mark.django_db

# Measured on the study below (4 items + 2 screening questions per batch); the same whatever the serving order.
# An answer's response carries `next` (the browser makes one request per item), so each answer count includes
# the general `next`'s read of the batch's reservations and its `served_at` stamp of the item it serves (+2), and
# the last answer's includes the completed batch's `next` (its lock and the check that nothing is left, +3).
START_QUERIES = 11
NEXT_QUERIES = 2
FINISHED_NEXT_QUERIES = 3  # a completed batch: the completion code
FIRST_ANSWER_QUERIES = 11 + NEXT_QUERIES  # also extends the other reservations from the grace period to the limit
ANSWER_QUERIES = 8 + NEXT_QUERIES
LAST_ANSWER_QUERIES = 9 + FINISHED_NEXT_QUERIES  # also completes the batch


@pytest.fixture
def general_path(settings):
    settings.ANNOTATION_HOT_PATH = False


def test_the_fast_path_is_on_by_default_on_postgresql():
    assert hot_path.available()


def _instructed(pid: str) -> Participant:
    """A participant of a study of 4 items + 2 screening questions per batch, past consent (instructions)."""
    study = make_study(n_instances=8, screening=2, per_batch=4)
    p = Participant(APIClient(), study.slug, pid)
    p.start()
    p.consent()
    return p


def test_start_next_and_answer_query_counts_of_the_general_path(general_path, django_assert_num_queries):
    assert not hot_path.available()  # the setting switches the fast path off
    p = _instructed("COUNT-1")
    with django_assert_num_queries(START_QUERIES):
        started = p.client.post(f"/api/v1/sessions/{p.token}/start/", {}, format="json")
    assert started.status_code == 200 and started.json()["state"] == "items", started.content
    with django_assert_num_queries(NEXT_QUERIES):
        body = p.next().json()
    for answered in range(6):
        item = body["item"]
        assert item is not None and body["progress"] == {"done": answered, "total": 6}, body
        expected = FIRST_ANSWER_QUERIES if answered == 0 else LAST_ANSWER_QUERIES if answered == 5 else ANSWER_QUERIES
        with django_assert_num_queries(expected):
            response = p.answer(item["id"], reservation_expected_answer(public_id=item["id"]))
        assert response.status_code == 201, response.content
        body = response.json()["next"]  # as the browser does: the answer's response carries the next item
    assert body["item"] is None and body["state"] == "completed", body
    with django_assert_num_queries(FINISHED_NEXT_QUERIES):
        body = p.next().json()
    assert body["item"] is None and body["state"] == "completed", body


# The first answer of a rewrite batch (3 items, no screening), and its `next`.
REWRITE_FIRST_ANSWER_QUERIES = 10 + NEXT_QUERIES


def test_writing_telemetry_adds_no_query_to_the_general_answer_path(general_path, django_assert_num_queries):
    """The telemetry is checked in Python and stored in the answer's own INSERT: the same count with or without."""
    from tests.annotation.services.test_telemetry import telemetry

    rewrite_study_create(
        slug="tel-count",
        sources=[(f"s{n}", f"gonna be late again for meeting number {n}")
                                                    for n in range(6)],
        target_style="formal", eligibility_questions=[], filters={"min_words": 0},
        settings=study_settings_build(annotators_per_item=2, items_per_batch=3),
    )
    # Answered at once (no server time to type in): the text pasted, which the bounds allow.
    for pid, block in (("COUNT-T1", None), ("COUNT-T2", telemetry(typed_chars=0, keystrokes=0, pasted_chars=60,
                                                                   paste_count=1, submit_ms=0, active_ms=0,
                                                                   first_key_ms=0, focus_loss_count=0,
                                                                   focus_loss_ms=0, focus_losses=[]))):
        p = Participant(APIClient(), "tel-count", pid)
        p.start()
        p.consent()
        item = p.next().json()["item"]
        body = {"item": item["id"], "answer": "I shall be late for the meeting again.",
                **({"telemetry": block} if block else {})}
        with django_assert_num_queries(REWRITE_FIRST_ANSWER_QUERIES):
            response = p.client.post(f"/api/v1/sessions/{p.token}/answers/", body, format="json")
        assert response.status_code == 201, response.content
    statuses = sorted(Response.objects.filter(study__slug="tel-count").values_list("telemetry_status", flat=True))
    assert statuses == ["consistent", "none"]
