"""The two requests a participant makes for an item, `next` and `answers`, in one or two SQL statements.

These two endpoints are almost all of a study's traffic, so on PostgreSQL they skip the ORM for the common case.
A browser makes ONE request per item: the answer's response carries what `next` would answer right after it (the
next item, or the batch's end with its code), so `next` is only called to start, to resume after a reload, after
an error, and by clients that ignore the answer's `next`.

- `next_fast`: one prepared statement returns the batch's state, its progress and the first unanswered item as
  the JSON text stored at reservation time (`Reservation.public_item`), which goes out unparsed, and stamps the
  item's `served_at` the first time it is served (the start of its server-measured time).
- `answer_fast`: one prepared read finds the reservation (no lock); the answer is validated in Python with the
  same `validate_answer` the general path uses; then ONE prepared statement (its own transaction, committed before
  the 201 goes out) locks the batch row, share-locks the participant, claims the reservation, inserts the
  response(s) with the server-measured time, extends the batch to its time limit when this was its first answer
  (it had only the grace period), completes the batch when this was its last item, and otherwise picks the item
  `next` would serve now and stamps its `served_at` as `next` does; the 201 carries that item's `next` body.

Everything else returns None and the caller takes the general ORM path in `sessions`, which handles every state
and error: not a running batch, an overdue one, an item already answered (the idempotent 200 or the 409), a
released reservation, an excluded participant, a wrong answer to a screening question (exclusion), an adaptive
study, a reservation made before `public_item` existed, an answer carrying writing telemetry (checked and stored by
the general path only), SQLite (the demo). A claim that loses a race returns None too, and nothing of it is stored:
the statement is atomic.

Scope (frozen): exactly these two requests (the answer's `next` body being the `next` request folded into it), for a
live item of a running, non-adaptive batch on PostgreSQL, and nothing more. A new rule about serving or answering (a
new item kind's check, a new state, a new limit, a new side effect of an answer) goes into the general path in
`sessions`/`engine` only; here it is a condition under which `next_fast`/`answer_fast` return None (read the column
in ANSWER_READ_SQL/NEXT_SQL and bail out), never a second implementation. What the fast path does reuse is written
once elsewhere: answers are validated by `answer_checks.validate_answer`, "a slot is held" is `engine.held_sql`
(the claim below is an unanswered reservation that holds its slot), deadlines come from
`participation.batch_deadline`, the finished body from `display.finished_payload`. The dual-path tests
(`serving_path` in tests/annotation/helpers.py) run the same scenarios through both paths;
`settings.ANNOTATION_HOT_PATH = False` (env ANNOTATION_HOT_PATH=0) switches the fast path off.

Locks: the statement takes the batch row first, as every general-path writer of a session does, so it
serializes with them (a screening failure being processed, an expiry) instead of deadlocking; then a share lock
on the participant, which an exclusion from the admin (participant first, then the reservations, no batch)
serializes with; then the reservation. An excluded participant's answer can never be stored as valid: the
statement re-checks `excluded` under the share lock, and an exclusion that commits first also releases the
reservation, so the claim fails.
"""
from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.utils import timezone, translation
from rest_framework.utils.encoders import JSONEncoder

from annotation.services.answer_checks import validate_answer
from annotation.services.display import finished_payload, redirect_with_code
from annotation.services.engine import held_sql
from annotation.services.participation import batch_deadline
from core.errors import ApplicationError
from tasks.models import screening_answer_for

logger = logging.getLogger(__name__)

# The first serve of an item stamps `served_at` (the server's clock for its time starts there); a repeat finds it
# set and writes nothing. The UPDATE re-checks `served_at IS NULL` on the row, so concurrent repeats keep the first.
NEXT_SQL = """
WITH b AS (
    SELECT b.id, b.state, b.expires_at, b.n_items, s.completion_code, s.redirect_url, p.platform,
           b.started_at + make_interval(mins => s.batch_time_limit_minutes) AS time_limit_at
    FROM annotation_batch b JOIN annotation_study s ON s.id = b.study_id
    JOIN annotation_participant p ON p.id = b.participant_id WHERE b.token = %(token)s
), first AS (
    SELECT r.id, r.public_item::text AS item, r.served_at FROM annotation_reservation r
    WHERE r.batch_id = (SELECT id FROM b) AND r.answered_at IS NULL ORDER BY r.position LIMIT 1
), served AS (
    UPDATE annotation_reservation r SET served_at = %(now)s
    FROM first f
    WHERE r.id = f.id AND f.served_at IS NULL AND r.served_at IS NULL
      AND EXISTS (SELECT 1 FROM b WHERE b.state = 'items' AND b.expires_at > %(now)s)
    RETURNING r.id
)
SELECT b.state, b.time_limit_at, b.expires_at > %(now)s, b.n_items,
       (SELECT count(*) FROM annotation_reservation r WHERE r.batch_id = b.id AND r.answered_at IS NOT NULL),
       (SELECT item FROM first), b.completion_code, b.redirect_url, b.platform, (SELECT count(*) FROM served)
FROM b
"""

ANSWER_READ_SQL = """
SELECT r.id, r.shown, r.answered_at IS NOT NULL, r.released, r.expires_at > %(now)s, r.study_item_id,
       r.screening_question_id, b.id, b.state, b.expires_at > %(now)s, b.number, b.n_items, b.started_at,
       b.participant_id, b.study_id, s.item_kind, s.adaptive_stopping, s.questions, s.rewrite_min_length,
       p.excluded, si.correct_answer, sq.correct_order, s.batch_time_limit_minutes, s.completion_code,
       s.redirect_url, p.platform, s.language
FROM annotation_reservation r
JOIN annotation_batch b ON b.id = r.batch_id
JOIN annotation_study s ON s.id = b.study_id
JOIN annotation_participant p ON p.id = b.participant_id
LEFT JOIN annotation_studyitem si ON si.id = r.study_item_id
LEFT JOIN tasks_screeningquestion sq ON sq.id = r.screening_question_id
WHERE r.public_id = %(item)s AND b.token = %(token)s
"""

# One statement, one transaction. CTE order matters only for locks: `batch` is evaluated first (the `person`
# CTE needs it), then `person`, then the claim; the INSERT reads the claim, so a failed claim stores nothing
# (a data-modifying CTE runs whether or not the final SELECT reads it).
ANSWER_WRITE_SQL = """
WITH batch AS (
    SELECT id, n_items FROM annotation_batch
    WHERE id = %(batch)s AND state = 'items' AND expires_at > %(now)s
    FOR NO KEY UPDATE
), person AS (
    SELECT id FROM annotation_participant
    WHERE id = %(participant)s AND NOT excluded AND EXISTS (SELECT 1 FROM batch)
    FOR SHARE
), before AS (
    SELECT count(answered_at) AS done, max(answered_at) AS last
    FROM annotation_reservation WHERE batch_id = %(batch)s
), claimed AS (
    UPDATE annotation_reservation r
    SET answered_at = %(now)s,
        shown_at = COALESCE(r.served_at, r.shown_at, GREATEST((SELECT last FROM before), %(started)s::timestamptz))
    WHERE r.id = %(reservation)s AND r.answered_at IS NULL AND {held}
      AND EXISTS (SELECT 1 FROM person)
    RETURNING r.id, r.shown, r.shown_at
), stored AS (
    INSERT INTO annotation_response (
        study_id, participant_id, study_item_id, screening_question_id, batch_number, question, answer, value,
        is_screening, is_correct, is_valid, shown, shown_at, answered_at, seconds, server_seconds, batch_id,
        reservation_id)
    SELECT %(study)s, %(participant)s, %(study_item)s::bigint, %(screening)s::bigint, %(batch_number)s, a.question,
           a.answer, a.value, %(is_screening)s, %(is_correct)s::boolean, true, c.shown, c.shown_at, %(now)s,
           %(seconds)s::float8, EXTRACT(EPOCH FROM (%(now)s - c.shown_at))::float8, %(batch)s, c.id
    FROM claimed c,
         unnest(%(questions)s::text[], %(answers)s::text[], %(values)s::float8[]) AS a(question, answer, value)
    RETURNING 1
), upcoming AS (
    -- What `next` serves after this answer: the batch's first other unanswered reservation (NEXT_SQL's choice,
    -- the claimed row left out: this statement's snapshot still sees it unanswered).
    SELECT r.id, r.public_item::text AS item FROM annotation_reservation r
    WHERE r.batch_id = %(batch)s AND r.answered_at IS NULL AND r.id <> %(reservation)s
      AND EXISTS (SELECT 1 FROM claimed)
    ORDER BY r.position LIMIT 1
), touched AS (
    -- One UPDATE for the batch's other reservations (a row changed twice in one statement keeps only one change):
    -- the batch's first answer gives its live reservations the whole time limit (they had the grace period), and
    -- the upcoming item is stamped as served, as `next` stamps it (a repeat keeps the first stamp).
    -- SKIP LOCKED: a row a reserver is releasing right now (it saw it expire) is left to it, so this statement
    -- never waits on a reserver, which may be waiting on the rows this one holds.
    UPDATE annotation_reservation r
    SET expires_at = CASE WHEN (SELECT done FROM before) = 0 AND NOT r.released AND r.expires_at > %(now)s
                               AND r.expires_at < %(deadline)s THEN %(deadline)s ELSE r.expires_at END,
        served_at = CASE WHEN r.id = (SELECT id FROM upcoming) THEN COALESCE(r.served_at, %(now)s)
                         ELSE r.served_at END
    WHERE r.id IN (
        SELECT id FROM annotation_reservation
        WHERE batch_id = %(batch)s AND id <> %(reservation)s AND answered_at IS NULL AND EXISTS (SELECT 1 FROM claimed)
          AND (id = (SELECT id FROM upcoming)
               OR ((SELECT done FROM before) = 0 AND NOT released AND expires_at > %(now)s
                   AND expires_at < %(deadline)s))
        FOR NO KEY UPDATE SKIP LOCKED)
    RETURNING 1
), finished AS (
    -- One UPDATE of the batch row (a row changed twice in one statement keeps only one change): the first
    -- answer extends the deadline, the last completes the batch.
    UPDATE annotation_batch
    SET expires_at = GREATEST(expires_at, %(deadline)s),
        state = CASE WHEN (SELECT done FROM before) + 1 >= (SELECT n_items FROM batch) THEN 'completed' ELSE state END,
        finished_at = CASE WHEN (SELECT done FROM before) + 1 >= (SELECT n_items FROM batch) THEN %(now)s
                           ELSE finished_at END
    WHERE id = %(batch)s AND EXISTS (SELECT 1 FROM claimed)
      AND ((SELECT done FROM before) = 0 OR (SELECT done FROM before) + 1 >= (SELECT n_items FROM batch))
    RETURNING state
)
SELECT (SELECT count(*) FROM claimed), (SELECT count(*) FROM finished WHERE state = 'completed'),
       (SELECT done FROM before), (SELECT count(*) FROM touched), (SELECT item FROM upcoming)
""".replace("{held}", held_sql(alias="r", now="%(now)s"))


def available() -> bool:
    """The fast path runs: switched on (settings.ANNOTATION_HOT_PATH) and on PostgreSQL."""
    return settings.ANNOTATION_HOT_PATH and connection.vendor == "postgresql"


def _execute(sql: str, params: dict[str, Any]) -> list[tuple]:
    """Run a statement on Django's connection with server-side binding, prepared once per connection.

    A connection the database dropped (a restart, a failover, `pg_terminate_backend`, an idle timeout) is replaced
    and the statement sent once more, so a participant never sees a 500 for it: Django checks a persistent
    connection before a request reuses it only when the ORM opens a cursor, which this path never does. Safe to
    send twice: NEXT_SQL stamps `served_at` only where it is empty, and ANSWER_WRITE_SQL claims an unanswered
    reservation, so a write that committed before its answer was lost claims nothing the second time (the general
    path then answers the idempotent 200), and the database's unique constraint (`response_one_per_item`) stores a
    participant's answer to an item once whatever happens."""
    try:
        return _execute_once(sql, params)
    except (OperationalError, InterfaceError):
        if not _dropped():
            raise
        logger.warning("the database dropped the hot path's connection; sending the statement on a new one")
        connection.close()
        return _execute_once(sql, params)


def _execute_once(sql: str, params: dict[str, Any]) -> list[tuple]:
    # PostgreSQL only: the SQLite demo never loads psycopg
    import psycopg

    connection.ensure_connection()
    # Django's error wrapper: psycopg errors become django.db errors, and a broken connection is marked so that
    # Django closes it at the end of the request instead of handing it to the next one.
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchall()


def _dropped() -> bool:
    """The connection is gone (not a statement's error), and nothing else of this request rides on it (outside a
    transaction: a lost transaction cannot be resumed on another connection)."""
    raw = connection.connection
    return not connection.in_atomic_block and (raw is None or raw.closed or bool(getattr(raw, "broken", False)))


def next_fast(*, token: str) -> bytes | None:
    """The whole JSON body of `next` for a running batch with an unanswered item, or None for the general path."""
    if not available() or not token or len(token) > 64:
        return None
    rows = _execute(NEXT_SQL, {"token": token, "now": timezone.now()})
    if not rows:
        return None
    state, time_limit_at, live, total, done, item, completion_code, redirect_url, platform, _served = rows[0]
    if state == "completed" and done == total:
        # The last answer completed the batch: the completion code and where to go with it.
        return json.dumps(finished_payload(
            state=state, completion_code=completion_code,
            redirect_url=redirect_with_code(redirect_url, completion_code, platform=platform),
            progress={"done": done, "total": total},
        )).encode()
    if state != "items" or not live or not item or item == "{}":
        return None
    return _items_body(item=item, done=done, total=total, time_limit_at=time_limit_at)


def answer_fast(*, token: str, item: Any, answer: Any, seconds: float | None,
                telemetry: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Store an answer in one statement; the 201 body (with `next`, the JSON body `next` would answer now, as
    bytes, or None where only the general `next` can serve it), or None for the general path.

    Raises the general path's ApplicationError (400) for an invalid answer to a live item."""

    if (not available() or not token or len(token) > 64 or not isinstance(item, str) or not item or len(item) > 32
            or telemetry is not None):
        return None
    now = timezone.now()
    rows = _execute(ANSWER_READ_SQL, {"item": item, "token": token, "now": now})
    if not rows:
        return None
    (reservation_id, shown, answered, released, reservation_live, study_item_id, screening_id, batch_id, state,
     batch_live, batch_number, n_items, started_at, participant_id, study_id, item_kind, adaptive, questions,
     rewrite_min_length, excluded, item_correct, screening_order, time_limit_minutes, completion_code, redirect_url,
     platform, language) = rows[0]
    if (state != "items" or not batch_live or answered or released or not reservation_live or excluded or adaptive
            or not shown or shown == "{}"):
        return None
    # Django's connection hands json/jsonb over as text (the ORM's JSONField parses it): parse what is needed.
    shown = json.loads(shown)
    questions = json.loads(questions) if item_kind == "likert" else []
    study = SimpleNamespace(item_kind=item_kind, questions=questions, rewrite_min_length=rewrite_min_length)
    answers = _validated(study=study, shown=shown, answer=answer, language=language)
    is_screening = screening_id is not None
    if is_screening:
        correct = screening_answer_for(correct_order=screening_order, setup=item_kind)
        if correct and answers[0][1] != correct:
            return None  # a failed screening question: the general path excludes the participant
    else:
        correct = item_correct or ""
    deadline = batch_deadline(time_limit_minutes=time_limit_minutes, started_at=started_at or now)
    result = _execute(ANSWER_WRITE_SQL, {
        "batch": batch_id, "participant": participant_id, "reservation": reservation_id, "now": now,
        "deadline": deadline, "started": started_at, "study": study_id, "study_item": study_item_id,
        "screening": screening_id, "batch_number": batch_number, "is_screening": is_screening,
        "is_correct": (answers[0][1] == correct) if correct else None, "seconds": seconds,
        "questions": [q for q, _, _ in answers], "answers": [a for _, a, _ in answers],
        "values": [v for _, _, v in answers],
    })
    claimed, finished, done_before, _touched, upcoming = result[0]
    if not claimed:
        return None  # lost a race (answered, released, excluded, expired meanwhile): nothing was stored
    progress = {"done": done_before + 1, "total": n_items}
    if finished:
        following: bytes | None = json.dumps(finished_payload(
            state="completed", completion_code=completion_code,
            redirect_url=redirect_with_code(redirect_url, completion_code, platform=platform), progress=progress,
        )).encode()
    elif upcoming and upcoming != "{}":
        # `deadline` is the time limit NEXT_SQL shows (started_at + the limit), the batch having started.
        following = _items_body(item=upcoming, done=progress["done"], total=n_items, time_limit_at=deadline)
    else:
        following = None  # the general `next` serves what this statement cannot (a reservation without its JSON)
    return {"stored": True, "state": "completed" if finished else "items", "progress": progress,
            "next": following}


def _validated(*, study: SimpleNamespace, shown: dict[str, Any], answer: Any, language: str) -> Any:
    """`validate_answer`'s rows; its 400 in the study's language. The request has not switched language (this path
    loads no study object), so a refused answer is checked once more under the study's language for its message:
    an accepted answer costs nothing more, and no query either way."""
    try:
        return validate_answer(study=study, shown=shown, answer=answer)
    except ApplicationError:
        with translation.override(language):
            return validate_answer(study=study, shown=shown, answer=answer)


def _items_body(*, item: str, done: int, total: int, time_limit_at: Any) -> bytes:
    """The body of `next` for a running batch: the item's stored JSON goes in as it is; the time is encoded as
    DRF encodes it on the general path."""
    return (
        f'{{"item":{item},"progress":{{"done":{done},"total":{total}}},"state":"items",'
        f'"expires_at":{json.dumps(time_limit_at, cls=JSONEncoder)}}}'
    ).encode()
