"""Paying the bonus ledger's pending rows, money-safe (steps 2 to 4 of `bonuses`): rows claimed under a skip-locked
row lock, committed before any call; on Prolific a bulk bonus set up (its id stored) and paid at most once, on MTurk
SendBonus with the row's id as UniqueRequestToken; every call through `_send`, and an unknown outcome stops the run
for a person to resolve, never retried."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from core.errors import ApplicationError
from platforms.backends import backend_for
from platforms.backends.base import PlannedCall, PlatformBackend
from platforms.clients.errors import NOT_SENT, UNKNOWN, PlatformCallError
from platforms.error_codes import UNKNOWN_OUTCOME
from platforms.models import BonusPayment, BulkBonus, PlatformStudy

STALE = timedelta(minutes=10)


def _by_worker_chunks(lines: list[tuple[str, Decimal]], size: int) -> list[list[tuple[str, Decimal]]]:
    """One CSV line per worker (a worker's rows summed), at most `size` workers per set-up."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for worker, amount in lines:
        totals[worker] += amount
    workers = sorted(totals)
    return [[(w, totals[w]) for w in workers[i:i + size]] for i in range(0, len(workers), size)]


def _stale_to_unknown(platform_study: PlatformStudy) -> None:
    """Steps left half-done by a runner that died: a set-up or pay call may have gone out, so the outcome is unknown
    (a set-up alone moves no money, but it is left for a person too)."""
    cutoff = timezone.now() - STALE
    for state, to in ((BulkBonus.State.SETTING_UP, BulkBonus.State.SETUP_UNKNOWN),
                      (BulkBonus.State.PAYING, BulkBonus.State.PAY_UNKNOWN)):
        for bulk in BulkBonus.objects.filter(platform_study=platform_study, state=state).filter(
                Q(setup_called_at__lt=cutoff) | Q(pay_called_at__lt=cutoff)):
            _bulk_finish(bulk, state=to, rows=BonusPayment.State.UNKNOWN,
                         error="the run sending it stopped before recording Prolific's answer")
    BonusPayment.objects.filter(platform_study=platform_study, state=BonusPayment.State.CLAIMED, bulk__isnull=True,
                                sent_at__lt=cutoff).update(
        state=BonusPayment.State.UNKNOWN, error="the run sending it stopped before recording MTurk's answer")


def bonuses_pay(*, platform_study: PlatformStudy) -> dict[str, Any]:
    """Pay every pending row of the study this runner can claim; stop at the first unknown outcome."""
    _stale_to_unknown(platform_study)
    unknown = BonusPayment.objects.filter(platform_study=platform_study, state=BonusPayment.State.UNKNOWN)
    if unknown.exists():
        total = unknown.aggregate(total=Sum("amount"))["total"]
        raise ApplicationError(
            f"{unknown.count()} bonus row(s) ({total:.2f} {platform_study.currency}) of study "
            f"{platform_study.study.slug} have an unknown outcome: check them on the platform and resolve them "
            "(admin › Crowd platforms › Bonus ledger, or platform_reconcile) before anything more is paid. Nothing "
            "was sent.", code=UNKNOWN_OUTCOME, status=409)
    backend = backend_for(platform_study.account)
    try:
        if backend.BONUS_MODE == "bulk":
            return _pay_bulk(platform_study, backend)
        return _pay_each(platform_study, backend)
    finally:
        backend.close()


def _outcome(platform_study: PlatformStudy) -> dict[str, Any]:
    counts = {state: {"rows": 0, "amount": Decimal(0)} for state in BonusPayment.State.values}
    for state, n, total in (BonusPayment.objects.filter(platform_study=platform_study).values_list("state")
                            .annotate(n=Count("id"), total=Sum("amount"))):
        counts[state] = {"rows": n, "amount": total}
    return {"ledger": {state: {"rows": v["rows"], "amount": f"{v['amount']:.2f}"} for state, v in counts.items()
                       if v["rows"]}}


def _bulk_finish(bulk: BulkBonus, *, state: str, rows: str, error: str = "", **fields: Any) -> None:
    with transaction.atomic():
        BulkBonus.objects.filter(pk=bulk.pk).update(state=state, error=error, finished_at=timezone.now(), **fields)
        update: dict[str, Any] = {"state": rows, "error": error}
        if rows == BonusPayment.State.PAID:
            update["paid_at"] = timezone.now()
        if rows == BonusPayment.State.PENDING:
            update["bulk"] = None
        BonusPayment.objects.filter(bulk=bulk).update(**update)


@dataclass(frozen=True)
class BonusCallOutcome:
    """What one bonus call came to: `answered` (with the platform's `response`), or the `outcome` of its error:
    UNKNOWN (it may have moved money), NOT_SENT (it surely did not), REFUSED (the platform said no)."""

    answered: bool
    response: Any = None
    outcome: str = ""
    error: str = ""


def _send(backend: PlatformBackend, call: PlannedCall, made: dict[str, Any]) -> BonusCallOutcome:
    """Send one bonus call, once, and classify what came back; the call and its error are counted in `made`. The
    caller wrote and committed its rows (the idempotency key, the state) before; nothing here retries, and what an
    outcome does to the rows is the caller's (an unknown one always stops the run for a person to resolve)."""
    made["calls_made"] += 1
    try:
        return BonusCallOutcome(answered=True, response=backend.send(call))
    except PlatformCallError as exc:
        made["errors"].append(exc.message)
        return BonusCallOutcome(answered=False, outcome=exc.outcome, error=exc.message)


def _stopped(made: dict[str, Any], why: str | None, platform_study: PlatformStudy) -> dict[str, Any]:
    """A run's summary: the calls it made, why it stopped early (None: it paid all it could), and the ledger."""
    return {**made, "stopped": why, **_outcome(platform_study)}


def _pay_bulk(platform_study: PlatformStudy, backend: PlatformBackend) -> dict[str, Any]:
    made: dict[str, Any] = {"calls_made": 0, "set_ups": [], "errors": []}
    with transaction.atomic():  # claim: rows into set-ups, committed before any call
        rows = list(BonusPayment.objects.select_for_update(skip_locked=True).filter(
            platform_study=platform_study, state=BonusPayment.State.PENDING).order_by("worker_id", "created_at"))
        for chunk in _by_worker_chunks([(r.worker_id, r.amount) for r in rows], backend.BONUS_SETUP_CHUNK):
            workers = {w for w, _ in chunk}
            call = backend.bonus_setup_call(platform_study, chunk)
            bulk = BulkBonus.objects.create(platform_study=platform_study, csv=call.body["csv_bonuses"],
                                            total=sum((a for _, a in chunk), Decimal(0)),
                                            currency=platform_study.currency)
            BonusPayment.objects.filter(pk__in=[r.pk for r in rows if r.worker_id in workers]).update(
                state=BonusPayment.State.CLAIMED, bulk=bulk, sent_at=timezone.now())
    # Set-ups claimed by this run, and any earlier set-up left unpaid (set up, never paid).
    for bulk in BulkBonus.objects.filter(platform_study=platform_study, state__in=[
            BulkBonus.State.SETTING_UP, BulkBonus.State.SET_UP], pay_called_at__isnull=True).order_by("created_at"):
        if bulk.state == BulkBonus.State.SETTING_UP:
            if not BulkBonus.objects.filter(pk=bulk.pk, state=BulkBonus.State.SETTING_UP,
                                            setup_called_at__isnull=True).update(setup_called_at=timezone.now()):
                continue  # another runner is setting it up
            sent = _send(backend, backend.bonus_setup_call(platform_study, csv_text=bulk.csv), made)
            if not sent.answered:
                if sent.outcome == UNKNOWN:
                    _bulk_finish(bulk, state=BulkBonus.State.SETUP_UNKNOWN, rows=BonusPayment.State.UNKNOWN,
                                 error=sent.error)
                    return _stopped(made, "set-up outcome unknown", platform_study)
                rows_to = BonusPayment.State.PENDING if sent.outcome == NOT_SENT else BonusPayment.State.FAILED
                _bulk_finish(bulk, state=BulkBonus.State.SETUP_FAILED, rows=rows_to, error=sent.error)
                continue
            response = sent.response
            BulkBonus.objects.filter(pk=bulk.pk).update(state=BulkBonus.State.SET_UP, setup_response=response or {},
                                                        external_id=str((response or {}).get("id") or ""))
            bulk.refresh_from_db()
        made["set_ups"].append(bulk.external_id)
        # At most one pay call per set-up: the step is taken (and committed) before the call, by one runner only.
        if not BulkBonus.objects.filter(pk=bulk.pk, state=BulkBonus.State.SET_UP, pay_called_at__isnull=True).update(
                state=BulkBonus.State.PAYING, pay_called_at=timezone.now()):
            continue
        sent = _send(backend, backend.bonus_pay_call(bulk.external_id), made)
        if not sent.answered:
            if sent.outcome == UNKNOWN:
                _bulk_finish(bulk, state=BulkBonus.State.PAY_UNKNOWN, rows=BonusPayment.State.UNKNOWN,
                             error=sent.error)
                return _stopped(made, "pay outcome unknown", platform_study)
            # Refused or never sent: nothing was paid; the rows wait for a new set-up on the next run.
            _bulk_finish(bulk, state=BulkBonus.State.PAY_FAILED, rows=BonusPayment.State.PENDING, error=sent.error)
            continue
        response = sent.response
        _bulk_finish(bulk, state=BulkBonus.State.PAID, rows=BonusPayment.State.PAID,
                     pay_response=response if isinstance(response, dict) else {"body": response})
    return _stopped(made, None, platform_study)


def _pay_each(platform_study: PlatformStudy, backend: PlatformBackend) -> dict[str, Any]:
    made: dict[str, Any] = {"calls_made": 0, "errors": []}
    while True:
        with transaction.atomic():
            row = (BonusPayment.objects.select_for_update(skip_locked=True, of=("self",)).select_related("submission")
                   .filter(platform_study=platform_study, state=BonusPayment.State.PENDING)
                   .order_by("created_at").first())
            if row is None:
                break
            BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.CLAIMED, sent_at=timezone.now())
        if row.submission is None:
            BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.FAILED,
                                                          error="no assignment of this worker to pay the bonus on")
            continue
        call = backend.bonus_call(worker_id=row.worker_id, assignment_id=row.submission.external_id, amount=row.amount,
                                  reason=f"{row.reason} [ref {row.pk}]", token=str(row.pk))
        sent = _send(backend, call, made)
        if not sent.answered:
            if sent.outcome == UNKNOWN:
                BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.UNKNOWN, error=sent.error)
                return _stopped(made, "outcome unknown", platform_study)
            to = BonusPayment.State.PENDING if sent.outcome == NOT_SENT else BonusPayment.State.FAILED
            BonusPayment.objects.filter(pk=row.pk).update(state=to, error=sent.error)
            if to == BonusPayment.State.PENDING:
                return _stopped(made, "platform unreachable", platform_study)
            continue
        BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.PAID, paid_at=timezone.now(),
                                                      response=_jsonable(sent.response))
    return _stopped(made, None, platform_study)


def _jsonable(response: Any) -> dict[str, Any]:
    if not isinstance(response, dict):
        return {"body": str(response)}
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}
