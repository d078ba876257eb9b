"""The assignment engine: reserving items for a batch, releasing expired reservations (adaptive closing is in
`adaptive`).

Invariant: an item never has more than k valid responses. Each valid response belongs to a reservation that holds
one of the item's slots 1…k; a slot is held while its reservation is not released, and the partial unique index
`reservation_one_holder_per_slot` makes two holders of one slot impossible in PostgreSQL itself. Reservers lock
the item rows they hand out (`FOR UPDATE SKIP LOCKED`), release expired holders under that lock and recount; an
answer claims its reservation with a conditional UPDATE (not released, not expired, not answered), so a release
and a late answer can never both win.

Serving order: fewest holders first, ties broken at random. Candidates are walked along the index
(study, fill, sort_key): `fill` is the holder count the last reserver wrote under the row lock (recounted after
out-of-band releases and periodically), `sort_key` a random number drawn once per item. Only the walked rows are
counted exactly, so starting a batch reads about as many items as it reserves, whatever the study's size.
"""
from __future__ import annotations

import json
import random
import secrets
import time
from datetime import datetime

from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import ORDERING_KINDS, Batch, Participant, Reservation, Study, StudyItem
from annotation.services.display import public_item, shown_for_item, shown_for_screening
from annotation.services.participation import batch_deadline, first_answer_deadline
from annotation.services.screening import study_screening_pool
from tasks.models import ScreeningQuestion

LOCK_WAIT_SECONDS = 5.0  # how long a reserver waits for items other reservers hold locked


def new_public_id() -> str:
    return secrets.token_urlsafe(12)


def held_sql(*, alias: str = "r", now: str = "%s") -> str:
    """THE definition of "a slot is held", as an SQL condition on the reservation row `alias`: the reservation is
    not released and is either answered or live (not yet expired at `now`, an SQL parameter placeholder).

    Every SQL statement that decides holding derives from it: `HELD_SQL` (the reservers' count, PostgreSQL and
    SQLite) and the hot path's claim (`hot_path.ANSWER_WRITE_SQL`: an unanswered reservation that holds its slot).
    The general answer path checks the same rows in Python on the locked reservation (`answers._answer_locked`:
    not expired, not released, not answered); tests/annotation/test_held.py checks this definition against
    reservations in every state. A released reservation never holds: the partial unique index
    `reservation_one_holder_per_slot` (annotation/models.py) leaves out exactly those."""
    return f"NOT {alias}.released AND ({alias}.answered_at IS NOT NULL OR {alias}.expires_at > {now})"


def held_count_sql(*, item: str) -> str:
    """The number of slots held on the item whose id is the SQL expression `item` (one `%s`: now)."""
    return f"SELECT COUNT(*) AS n FROM annotation_reservation r WHERE r.study_item_id = {item} AND {held_sql()}"


# Slots the walked item `i` holds right now (open_items).
HELD_SQL = held_count_sql(item="i.id")


CANDIDATES_SQL = """i.study_id = %s AND NOT i.is_closed
  AND i.id NOT IN (SELECT study_item_id FROM annotation_reservation
                   WHERE participant_id = %s AND study_item_id IS NOT NULL)
  {families}{exclude}"""

# PostgreSQL: the count in a LATERAL subquery is computed once per item, and the row lock applies to the items.
OPEN_ITEMS_SQL = """SELECT i.id, i.family FROM annotation_studyitem i CROSS JOIN LATERAL ({held}) held
WHERE {candidates} AND held.n < %s {order} LIMIT %s {lock}"""

# SQLite (the demo) has no LATERAL: the same count in a derived table, and no row locks (one writer at a time).
OPEN_ITEMS_PORTABLE_SQL = """SELECT id, family FROM (
    SELECT i.id, i.family, i.fill, i.sort_key, ({held}) AS n FROM annotation_studyitem i WHERE {candidates}) held
WHERE held.n < %s {order} LIMIT %s"""

# The same person (platform + id) across studies: the triple and the quadruple form of one draw share a family,
# and seeing one gives the other away.
SEEN_FAMILIES_SQL = """
  AND (i.family = '' OR i.family NOT IN (
      SELECT si.family FROM annotation_reservation r
      JOIN annotation_participant p ON p.id = r.participant_id
      JOIN annotation_studyitem si ON si.id = r.study_item_id
      WHERE p.platform = %s AND p.external_id = %s AND si.family <> ''))
"""


def _placeholders(n: int) -> str:
    """`%s, %s, …`: n parameters of a raw statement (an IN list, a row of VALUES)."""
    return ", ".join(["%s"] * n)


def open_items(*, study: Study, participant: Participant, now: datetime, limit: int,
               exclude_ids: set[int] = frozenset(), lock: bool = False,
               ordered: bool = True) -> list[tuple[int, str]]:
    """(id, family) of items this participant could be given now, fewest holders first with a random tie-break
    (`ordered=False`: any, for a mere "is there work" check).

    One statement. The items are walked in serving order (`fill`, then the random `sort_key`, along the
    `studyitem_serving_order` index), so a reserver reads a handful of rows, not the whole study; each walked item's
    holders (answered and not released, or live) are counted exactly, through the partial index of live slots, and
    only items with a free slot are returned. With `lock`, the rows come back locked (`FOR UPDATE
    SKIP LOCKED`: rows other reservers hold are passed over, not waited for) and the caller must be in a
    transaction. On SQLite (the demo) the same count runs in a derived table, without locks: SQLite has one
    writer at a time."""
    params: list = [connection.ops.adapt_datetimefield_value(now), study.pk, participant.pk]
    families = ""
    if not study.allow_multiple_setups:
        families = SEEN_FAMILIES_SQL
        params += [participant.platform, participant.external_id]
    exclude = ""
    if exclude_ids:
        exclude = f"AND i.id NOT IN ({_placeholders(len(exclude_ids))})"
        params += sorted(exclude_ids)
    params += [study.annotators_per_item, limit]
    candidates = CANDIDATES_SQL.format(families=families, exclude=exclude)
    if connection.vendor == "postgresql":
        sql = OPEN_ITEMS_SQL.format(held=HELD_SQL, candidates=candidates,
                                    order="ORDER BY i.fill, i.sort_key" if ordered else "",
                                    lock="FOR UPDATE OF i SKIP LOCKED" if lock else "")
    else:
        sql = OPEN_ITEMS_PORTABLE_SQL.format(held=HELD_SQL, candidates=candidates,
                                             order="ORDER BY held.fill, held.sort_key" if ordered else "")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(row[0], row[1]) for row in cursor.fetchall()]


def study_has_work_for(*, study: Study, participant: Participant) -> bool:
    return bool(open_items(study=study, participant=participant, now=timezone.now(), limit=1, ordered=False))


def release_expired_for_items(*, item_ids: list[int], now: datetime) -> int:
    return Reservation.objects.filter(
        study_item_id__in=item_ids, released=False, answered_at__isnull=True, expires_at__lte=now
    ).update(released=True, released_at=now)


def _lock_and_take(*, study: Study, participant: Participant, wanted: int, now: datetime,
                   exclude_ids: set[int], exclude_families: set[str]) -> list[tuple[StudyItem, int]]:
    """Lock up to `wanted` open items (fewest holders first, skipping rows other reservers hold) and give each a
    free slot. The caller is inside a transaction; locked rows are added to `exclude_ids`."""
    k = study.annotators_per_item
    rows = open_items(study=study, participant=participant, now=now, limit=wanted, exclude_ids=exclude_ids,
                      lock=True)
    if not rows:
        return []
    # The texts of the locked items only (the candidate query stays narrow: ids, families, holder counts).
    by_id = StudyItem.objects.select_related("instance").only(
        "id", "kind", "family", "payload", "instance", "instance__anchor_1", "instance__anchor_2",
        "instance__sentence_1", "instance__sentence_2",
    ).in_bulk([pk for pk, _ in rows])
    locked = [by_id[pk] for pk, _ in rows]
    ids = [item.pk for item in locked]
    exclude_ids.update(ids)
    # Under the row locks: expired holders are released, then the holders are recounted from committed rows
    # (the candidate query's counts came from a snapshot taken before the locks were granted).
    release_expired_for_items(item_ids=ids, now=now)
    held: dict[int, set[int]] = {pk: set() for pk in ids}
    for item_id, slot in Reservation.objects.filter(study_item_id__in=ids, released=False).values_list(
        "study_item_id", "slot"
    ):
        held[item_id].add(slot)
    taken: list[tuple[StudyItem, int]] = []
    fills: dict[int, int] = {}
    for item in locked:
        fills[item.pk] = len(held[item.pk])
        if not study.allow_multiple_setups and item.family and item.family in exclude_families:
            continue
        free = [slot for slot in range(1, k + 1) if slot not in held[item.pk]]
        if not free:
            continue
        taken.append((item, free[0]))
        fills[item.pk] += 1
        if item.family:
            exclude_families.add(item.family)
    _write_fills(fills)
    return taken


def _write_fills(fills: dict[int, int]) -> None:
    """Store exact holder counts of items whose rows the caller holds locked (their serving order)."""
    if not fills:
        return
    cases = " ".join(["WHEN %s THEN %s"] * len(fills))
    params: list[int] = [value for pair in fills.items() for value in pair]
    params += list(fills)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE annotation_studyitem SET fill = CASE id {cases} END "
            f"WHERE id IN ({_placeholders(len(fills))})",
            params,
        )


def study_items_refresh_fill(*, item_ids: list[int] | None = None) -> int:
    """Recount `fill` where releases outside a reservation (expiry, exclusion) left it high: the given items, or
    every open item (the periodic tidy-up). Each row is locked only while it is rewritten, in its own statement,
    so this never waits while holding other locks. Returns the number of items corrected."""
    holders = ("(SELECT COUNT(*) FROM annotation_reservation r "
               "WHERE r.study_item_id = annotation_studyitem.id AND NOT r.released)")
    where, params = "", []
    if item_ids is not None:
        if not item_ids:
            return 0
        params = sorted(set(item_ids))
        where = f" AND id IN ({_placeholders(len(params))})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE annotation_studyitem SET fill = {holders} WHERE NOT is_closed AND fill <> {holders}{where}",
            params,
        )
        return cursor.rowcount


def reservations_release(reservations: QuerySet[Reservation], *, now: datetime) -> int:
    """Release reservations outside a reserver's transaction (batch expiry, exclusion). Their items' `fill` is
    recounted right after the caller's transaction commits, when it holds no locks (a failure there is logged:
    the periodic tidy-up recounts too)."""
    item_ids = list(reservations.filter(study_item__isnull=False).values_list("study_item_id", flat=True))
    released = reservations.update(released=True, released_at=now)
    if item_ids:
        transaction.on_commit(lambda: study_items_refresh_fill(item_ids=item_ids), robust=True)
    return released


def batch_reserve(*, batch: Batch, now: datetime | None = None, rng: random.Random | None = None) -> int:
    """Reserve the batch's items and screening questions (caller holds the batch row lock, in a transaction).

    Until its first answer arrives the batch and its reservations live only for the study's grace period; the
    first answer extends them to the batch time limit (`first_answer_extend`). A batch that never answers thus
    gives its slots back after the grace period, to reservers (an expired reservation holds nothing) and to
    the periodic release."""
    study = batch.study
    participant = batch.participant
    now = now or timezone.now()
    rng = rng or random.Random(secrets.randbits(64))
    expires_at = first_answer_deadline(study=study, now=now)
    chosen: list[tuple[StudyItem, int]] = []
    exclude_ids: set[int] = set()
    families: set[str] = set()
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    pause = 0.005
    while len(chosen) < study.items_per_batch:
        got = _lock_and_take(study=study, participant=participant, wanted=study.items_per_batch - len(chosen),
                             now=now, exclude_ids=exclude_ids, exclude_families=families)
        if got:
            chosen.extend(got)
            continue
        # Nothing lockable: either no open item is left, or the open ones are being reserved by others right now
        # (their counts are not committed yet): wait briefly and look again.
        still_open = open_items(study=study, participant=participant, now=now, limit=1, exclude_ids=exclude_ids,
                                ordered=False)
        if time.monotonic() > deadline or not still_open:
            break
        time.sleep(pause + rng.random() * pause)
        pause = min(pause * 2, 0.1)
    if not chosen:
        return 0
    screening: list[ScreeningQuestion] = []
    if study.item_kind in ORDERING_KINDS and study.screening_per_batch:
        pool = study_screening_pool(study=study)  # the study's components, fair in its setup
        had = set(
            Reservation.objects.filter(participant=participant, screening_question__isnull=False).values_list(
                "screening_question_id", flat=True
            )
        ) if batch.number > 1 else set()  # a first batch: nothing seen yet
        fresh = [q for q in pool if q.pk not in had]
        source = fresh if len(fresh) >= study.screening_per_batch else pool
        screening = rng.sample(source, min(study.screening_per_batch, len(source)))
    total = len(chosen) + len(screening)
    screening_positions = set(rng.sample(range(total), len(screening)))
    rows: list[Reservation] = []
    items_iter = iter(chosen)
    screens_iter = iter(screening)
    for position in range(total):
        public_id = new_public_id()
        if position in screening_positions:
            question = next(screens_iter)
            shown = {**shown_for_screening(study=study, question=question, rng=rng), "position": position}
            row = Reservation(batch=batch, participant=participant, screening_question=question)
        else:
            item, slot = next(items_iter)
            shown = {**shown_for_item(study=study, item=item, rng=rng), "position": position}
            row = Reservation(batch=batch, participant=participant, study_item=item, slot=slot)
        row.position = position
        row.public_id = public_id
        row.shown = shown
        # What `next` sends, fixed now with the display: serving an item is then one read, no rendering.
        row.public_item = public_item(shown=shown, public_id=public_id, position=position, study=study)
        row.expires_at = expires_at
        rows.append(row)
    _insert_reservations(rows, now=now)
    batch.n_items = total
    batch.started_at = now
    batch.expires_at = expires_at
    return total


RESERVATION_COLUMNS = ("batch_id", "participant_id", "study_item_id", "screening_question_id", "slot", "position",
                       "public_id", "shown", "public_item", "expires_at", "released", "created_at")


def _insert_reservations(rows: list[Reservation], *, now: datetime) -> None:
    """One multi-row INSERT of a batch's reservations: a third of the Python time of `bulk_create`, which dumps
    every column as an array on PostgreSQL. Portable (SQLite takes the same statement); the JSON columns go in as
    text, which both databases accept for their JSON types."""
    ops = connection.ops
    created = ops.adapt_datetimefield_value(now)
    values = []
    for row in rows:
        expires = ops.adapt_datetimefield_value(row.expires_at)
        values += [row.batch_id, row.participant_id, row.study_item_id, row.screening_question_id, row.slot,
                   row.position, row.public_id, json.dumps(row.shown), json.dumps(row.public_item), expires, False,
                   created]
    placeholders = ", ".join([f"({_placeholders(len(RESERVATION_COLUMNS))})"] * len(rows))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO annotation_reservation ({', '.join(RESERVATION_COLUMNS)}) VALUES {placeholders}", values
        )


def first_answer_extend(*, batch: Batch, now: datetime) -> datetime:
    """The batch's first answer arrived (caller holds the batch row lock): the batch and its other live
    reservations get the whole time limit, counted from the start. Returns the new deadline."""
    deadline = batch_deadline(time_limit_minutes=batch.study.batch_time_limit_minutes,
                              started_at=batch.started_at or now)
    # Rows a reserver is releasing right now are skipped, never waited for (it may be waiting on ours).
    ids = list(Reservation.objects.select_for_update(skip_locked=True, no_key=True).filter(
        batch=batch, answered_at__isnull=True, released=False, expires_at__gt=now, expires_at__lt=deadline
    ).values_list("pk", flat=True))
    Reservation.objects.filter(pk__in=ids).update(expires_at=deadline)
    if batch.expires_at is None or batch.expires_at < deadline:
        Batch.objects.filter(pk=batch.pk).update(expires_at=deadline)
        batch.expires_at = deadline
    return deadline


def batch_expire(*, batch: Batch, now: datetime) -> bool:
    """Move an overdue batch to `expired` and release its unanswered reservations (caller holds the row lock)."""
    if batch.state != Batch.State.ITEMS or batch.expires_at is None or batch.expires_at > now:
        return False
    reservations_release(Reservation.objects.filter(batch=batch, answered_at__isnull=True, released=False), now=now)
    Batch.objects.filter(pk=batch.pk).update(state=Batch.State.EXPIRED, finished_at=now)
    batch.state = Batch.State.EXPIRED
    batch.finished_at = now
    return True


def reservations_release_expired(*, now: datetime | None = None) -> dict[str, int]:
    """Expire overdue batches, release their unanswered reservations and recount the serving order of items whose
    holders were released. Idempotent; the engine does not need it to run (expired reservations never count as
    holders, and a reserver recounts what it locks), it tidies up, moves sessions to `expired` and keeps released
    slots near the front of the serving order."""
    now = now or timezone.now()
    expired_batches = 0
    for batch_id in Batch.objects.filter(state=Batch.State.ITEMS, expires_at__lte=now).values_list("pk", flat=True):
        with transaction.atomic():
            batch = Batch.objects.select_for_update().filter(pk=batch_id, state=Batch.State.ITEMS).first()
            if batch is not None and batch_expire(batch=batch, now=now):
                expired_batches += 1
    released = Reservation.objects.filter(released=False, answered_at__isnull=True, expires_at__lte=now).update(
        released=True, released_at=now
    )
    refreshed = study_items_refresh_fill()
    return {"expired_batches": expired_batches, "released_reservations": released, "items_recounted": refreshed}
