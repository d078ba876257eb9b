"""Bonuses, money-safe.

1. The rules a researcher set (per accepted rewrite, per correct known-answer item, flat) and an optional one-off flat
   amount give rows of the bonus ledger. A row's (worker, source, units counted up to) is unique, so the same
   bonuses computed twice — a rerun, or two workers at once — are written once; only what was earned since is added.
   Caps (per participant, per study) are checked against everything already in the ledger before anything is
   written or sent.
2. Rows are written, committed, before any call. Paying claims them with a row lock (skip-locked), so two runners
   never send the same row.
3. Prolific: a bulk bonus is set up (its id stored), then paid; the pay call is made at most once per set-up
   (`pay_called_at` is written and committed before it, and only a set-up still unpaid may take that step). MTurk:
   SendBonus with UniqueRequestToken = the row's id.
4. A call whose outcome is unknown (a timeout or reset after sending, a 5xx) marks its rows "unknown" and stops the
   run. Nothing is ever sent again automatically: a person resolves unknown rows (admin › bonus ledger, or
   `platform_reconcile`), and until then no further bonus of that study is paid.
"""
from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.error_codes import WRONG_STATE
from annotation.models import Response
from annotation.services.rewrite_corpus import accepted_rewrites
from core.errors import ApplicationError
from platforms.backends import backend_for
from platforms.clients.errors import NOT_SENT, UNKNOWN, PlatformCallError
from platforms.error_codes import BONUS_CAP_EXCEEDED, UNKNOWN_OUTCOME
from platforms.models import BonusPayment, BonusRule, BulkBonus, PlatformStudy, PlatformSubmission
from platforms.services.decisions import _recommendations
from platforms.services.sync import platform_sync

STALE = timedelta(minutes=10)
COUNTED = (BonusPayment.State.PENDING, BonusPayment.State.CLAIMED, BonusPayment.State.PAID,
           BonusPayment.State.UNKNOWN)  # what a cap counts: owed, being paid, paid, maybe paid
NOT_BONUSABLE = {"RETURNED", "REJECTED", "TIMED-OUT", "SCREENED OUT", "Rejected"}


def amount_parse(value: Any, *, field: str) -> Decimal:
    try:
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        raise ApplicationError(f"{field.replace('_', ' ').capitalize()}: {value!r} is not an amount.",
                               field=field) from None
    if amount <= 0:
        raise ApplicationError(f"{field.replace('_', ' ').capitalize()}: must be more than 0 ({amount}).", field=field)
    return amount


def bonus_rule_add(*, platform_study: PlatformStudy, kind: str, amount: Any, label: str = "") -> BonusRule:
    if kind not in BonusRule.Kind.values:
        raise ApplicationError(f"Kind: one of {', '.join(BonusRule.Kind.values)}.", field="kind")
    rule, _ = BonusRule.objects.update_or_create(
        platform_study=platform_study, kind=kind, label=label,
        defaults={"amount": amount_parse(amount, field="amount"), "active": True})
    return rule


def bonus_caps_set(*, platform_study: PlatformStudy, per_participant: Any = None, per_study: Any = None) -> None:
    """Set the study's caps (an amount, or "none" to remove one); they bind every later bonus run."""
    changes: dict[str, Any] = {}
    for field, value in (("bonus_cap_per_participant", per_participant), ("bonus_cap_per_study", per_study)):
        if value is None:
            continue
        changes[field] = None if str(value).lower() in ("none", "") else amount_parse(value, field=field)
    if changes:
        PlatformStudy.objects.filter(pk=platform_study.pk).update(**changes)
        platform_study.refresh_from_db()


def _units(platform_study: PlatformStudy, rule: BonusRule, approved: set[str]) -> dict[str, int]:
    study = platform_study.study
    if rule.kind == BonusRule.Kind.FLAT:
        return dict.fromkeys(approved, 1)
    counts: dict[str, int] = defaultdict(int)
    if rule.kind == BonusRule.Kind.PER_ACCEPTED_REWRITE:
        for response in accepted_rewrites(study=study):
            counts[response.participant.external_id] += 1
    else:  # known-answer items: the study's items with a correct answer, answered correctly (not screening)
        rows = (Response.objects.filter(study=study, is_valid=True, is_screening=False, is_correct=True,
                                        participant__platform=platform_study.platform)
                .values_list("participant__external_id", flat=True))
        for worker in rows:
            counts[worker] += 1
    return {worker: n for worker, n in counts.items() if worker in approved and n > 0}


def _bonus_submission(platform_study: PlatformStudy) -> dict[str, PlatformSubmission]:
    """Each worker's submission a bonus goes with (the latest that is not returned, rejected or timed out)."""
    out: dict[str, PlatformSubmission] = {}
    for sub in PlatformSubmission.objects.filter(platform_study=platform_study).order_by("started_at", "pk"):
        if sub.status not in NOT_BONUSABLE:
            out[sub.worker_id] = sub
    return out


def bonus_plan(*, platform_study: PlatformStudy, flat: Decimal | None = None,
               label: str = "flat") -> list[dict[str, Any]]:
    """The ledger rows the rules (and the one-off flat amount) add now: what was earned and is not in the ledger."""
    recs = _recommendations(platform_study)
    submissions = _bonus_submission(platform_study)
    approved = {w for w, rec in recs.items() if rec["recommendation"] == "approve" and w in submissions}
    sources: list[tuple[str, Decimal, dict[str, int], str]] = []
    for rule in BonusRule.objects.filter(platform_study=platform_study, active=True).order_by("pk"):
        sources.append((f"rule:{rule.pk}", rule.amount, _units(platform_study, rule, approved),
                        rule.get_kind_display()))
    if flat is not None:
        sources.append((f"flat:{label}", flat, dict.fromkeys(approved, 1), f"flat bonus ({label})"))
    ledgered: dict[tuple[str, str], int] = {}
    for worker, source, upto in BonusPayment.objects.filter(platform_study=platform_study).values_list(
            "worker_id", "source", "units_upto"):
        ledgered[(worker, source)] = max(ledgered.get((worker, source), 0), upto)
    rows = []
    for source, rate, units, what in sources:
        for worker in sorted(units):
            already = ledgered.get((worker, source), 0)
            new = units[worker] - already
            if new <= 0:
                continue
            count = f"{new} × {rate:.2f}" if units[worker] != 1 or already else f"{rate:.2f}"
            rows.append({"worker": worker, "submission": submissions[worker], "source": source,
                         "units_upto": units[worker], "units": new, "amount": rate * new,
                         "reason": f"Bonus for study {platform_study.study.title or platform_study.study.slug}: "
                                   f"{what} ({count})."})
    return rows


def _caps_check(platform_study: PlatformStudy, rows: list[dict[str, Any]]) -> None:
    """Caps are checked against the whole ledger (what is owed, being paid, paid or maybe paid) plus the new rows."""
    per_worker: dict[str, Decimal] = defaultdict(Decimal)
    for worker, total in (BonusPayment.objects.filter(platform_study=platform_study, state__in=COUNTED)
                          .values_list("worker_id").annotate(total=Sum("amount"))):
        per_worker[worker] += total
    study_total = sum(per_worker.values(), Decimal(0))
    for row in rows:
        per_worker[row["worker"]] += row["amount"]
        study_total += row["amount"]
    cap = platform_study.bonus_cap_per_participant
    if cap is not None:
        over = sorted(w for w, total in per_worker.items() if total > cap and any(r["worker"] == w for r in rows))
        if over:
            raise ApplicationError(
                f"Bonus cap per participant ({cap:.2f} {platform_study.currency}) would be exceeded for "
                f"{len(over)} participant(s): {', '.join(over[:10])}{' …' if len(over) > 10 else ''} "
                f"(up to {max(per_worker[w] for w in over):.2f}). Nothing was written or sent.",
                code=BONUS_CAP_EXCEEDED, field="bonus_cap_per_participant")
    cap = platform_study.bonus_cap_per_study
    if cap is not None and rows and study_total > cap:
        raise ApplicationError(
            f"Bonus cap per study ({cap:.2f} {platform_study.currency}) would be exceeded: the ledger would total "
            f"{study_total:.2f}. Nothing was written or sent.", code=BONUS_CAP_EXCEEDED,
            field="bonus_cap_per_study")


def platform_bonus(*, platform_study: PlatformStudy, flat: Any = None, label: str = "flat", apply: bool = False,
                   sync: bool = True, created_by: str = "") -> dict[str, Any]:
    """Dry run: the rows the rules add and the calls that would pay them. `apply`: write them, then pay every
    pending row of the study once."""
    flat_amount = amount_parse(flat, field="flat") if flat not in (None, "") else None
    if not label or len(label) > 40:
        raise ApplicationError("Label: 1 to 40 characters.", field="label")
    if sync:
        platform_sync(platform_study=platform_study)
    with transaction.atomic():
        PlatformStudy.objects.select_for_update().get(pk=platform_study.pk)  # one ledger writer per study
        rows = bonus_plan(platform_study=platform_study, flat=flat_amount, label=label)
        _caps_check(platform_study, rows)
        added = sum((r["amount"] for r in rows), Decimal(0))
        unknown = BonusPayment.objects.filter(platform_study=platform_study,
                                              state=BonusPayment.State.UNKNOWN).count()
        if not apply:
            pending = list(BonusPayment.objects.filter(platform_study=platform_study,
                                                       state=BonusPayment.State.PENDING))
            return {"study": platform_study.study.slug, "dry_run": True, "currency": platform_study.currency,
                    "rows_added": len(rows), "amount_added": f"{added:.2f}",
                    "rows": [_row_public(r) for r in rows], "already_pending": len(pending),
                    "unknown": unknown, "calls": _dry_calls(platform_study, rows, pending)}
        BonusPayment.objects.bulk_create([
            BonusPayment(platform_study=platform_study, worker_id=r["worker"], submission=r["submission"],
                         source=r["source"], units_upto=r["units_upto"], units=r["units"], amount=r["amount"],
                         currency=platform_study.currency, reason=r["reason"], created_by=created_by)
            for r in rows])
    paid = bonuses_pay(platform_study=platform_study)
    return {"study": platform_study.study.slug, "dry_run": False, "currency": platform_study.currency,
            "rows_added": len(rows), "amount_added": f"{added:.2f}", **paid}


def _row_public(r: dict[str, Any]) -> dict[str, Any]:
    return {"worker": r["worker"], "source": r["source"], "units": r["units"], "amount": f"{r['amount']:.2f}",
            "reason": r["reason"]}


def _dry_calls(platform_study: PlatformStudy, rows: list[dict[str, Any]],
               pending: list[BonusPayment]) -> list[dict[str, Any]]:
    backend = backend_for(platform_study.account)
    lines = [(r["worker"], r["amount"], r["submission"].external_id, r["reason"]) for r in rows] + [
        (p.worker_id, p.amount, p.submission.external_id if p.submission else "", p.reason) for p in pending]
    if backend.BONUS_MODE == "bulk":
        calls = []
        for chunk in _by_worker_chunks([(w, a) for w, a, _, _ in lines], backend.BONUS_SETUP_CHUNK):
            calls.append(backend.bonus_setup_call(platform_study, chunk).describe())
            calls.append({**backend.bonus_pay_call("<id of the set-up above>").describe(),
                          "note": "sent once, after the set-up answers with its id"})
        return calls
    return [backend.bonus_call(worker_id=w, assignment_id=s, amount=a, reason=reason,
                               token="<the ledger row's id>").describe() for w, a, s, reason in lines]


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


def _pay_bulk(platform_study: PlatformStudy, backend: Any) -> dict[str, Any]:
    made = {"calls_made": 0, "set_ups": [], "errors": []}
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
            call = backend.bonus_setup_call(platform_study, csv_text=bulk.csv)
            made["calls_made"] += 1
            try:
                response = backend.send(call)
            except PlatformCallError as exc:
                made["errors"].append(exc.message)
                if exc.outcome == UNKNOWN:
                    _bulk_finish(bulk, state=BulkBonus.State.SETUP_UNKNOWN, rows=BonusPayment.State.UNKNOWN,
                                 error=exc.message)
                    return {**made, "stopped": "set-up outcome unknown", **_outcome(platform_study)}
                rows_to = BonusPayment.State.PENDING if exc.outcome == NOT_SENT else BonusPayment.State.FAILED
                _bulk_finish(bulk, state=BulkBonus.State.SETUP_FAILED, rows=rows_to, error=exc.message)
                continue
            BulkBonus.objects.filter(pk=bulk.pk).update(state=BulkBonus.State.SET_UP, setup_response=response or {},
                                                        external_id=str((response or {}).get("id") or ""))
            bulk.refresh_from_db()
        made["set_ups"].append(bulk.external_id)
        # At most one pay call per set-up: the step is taken (and committed) before the call, by one runner only.
        if not BulkBonus.objects.filter(pk=bulk.pk, state=BulkBonus.State.SET_UP, pay_called_at__isnull=True).update(
                state=BulkBonus.State.PAYING, pay_called_at=timezone.now()):
            continue
        made["calls_made"] += 1
        try:
            response = backend.send(backend.bonus_pay_call(bulk.external_id))
        except PlatformCallError as exc:
            made["errors"].append(exc.message)
            if exc.outcome == UNKNOWN:
                _bulk_finish(bulk, state=BulkBonus.State.PAY_UNKNOWN, rows=BonusPayment.State.UNKNOWN,
                             error=exc.message)
                return {**made, "stopped": "pay outcome unknown", **_outcome(platform_study)}
            # Refused or never sent: nothing was paid; the rows wait for a new set-up on the next run.
            _bulk_finish(bulk, state=BulkBonus.State.PAY_FAILED, rows=BonusPayment.State.PENDING, error=exc.message)
            continue
        _bulk_finish(bulk, state=BulkBonus.State.PAID, rows=BonusPayment.State.PAID,
                     pay_response=response if isinstance(response, dict) else {"body": response})
    return {**made, "stopped": None, **_outcome(platform_study)}


def _pay_each(platform_study: PlatformStudy, backend: Any) -> dict[str, Any]:
    made = {"calls_made": 0, "errors": []}
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
        made["calls_made"] += 1
        try:
            response = backend.send(call)
        except PlatformCallError as exc:
            made["errors"].append(exc.message)
            if exc.outcome == UNKNOWN:
                BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.UNKNOWN, error=exc.message)
                return {**made, "stopped": "outcome unknown", **_outcome(platform_study)}
            to = BonusPayment.State.PENDING if exc.outcome == NOT_SENT else BonusPayment.State.FAILED
            BonusPayment.objects.filter(pk=row.pk).update(state=to, error=exc.message)
            if to == BonusPayment.State.PENDING:
                return {**made, "stopped": "platform unreachable", **_outcome(platform_study)}
            continue
        BonusPayment.objects.filter(pk=row.pk).update(state=BonusPayment.State.PAID, paid_at=timezone.now(),
                                                      response=_jsonable(response))
    return {**made, "stopped": None, **_outcome(platform_study)}


def _jsonable(response: Any) -> dict[str, Any]:
    if not isinstance(response, dict):
        return {"body": str(response)}
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


# --- resolving unknown outcomes (a person's answer, after checking on the platform) -----------------------------


def bonus_resolve(*, platform_study: PlatformStudy, paid: bool, bulk_id: str = "", payment_ids: list[str] = (),
                  by: Any = None, note: str = "") -> dict[str, Any]:
    """Resolve rows whose outcome is unknown: `paid` (seen paid on the platform) or not (they become pending and are
    paid by a later run: on MTurk with the same UniqueRequestToken). A Prolific bulk bonus is resolved whole."""
    now = timezone.now()
    fields = {"resolved_by": by if getattr(by, "pk", None) else None, "resolved_at": now, "resolution": note[:500]}
    with transaction.atomic():
        if bulk_id:
            bulk = BulkBonus.objects.select_for_update().filter(platform_study=platform_study).filter(
                Q(external_id=bulk_id) | Q(pk=_uuid_or_none(bulk_id))).first()
            if bulk is None or bulk.state not in (BulkBonus.State.PAY_UNKNOWN, BulkBonus.State.SETUP_UNKNOWN):
                raise ApplicationError(f"Bulk bonus {bulk_id}: not one with an unknown outcome.", code=WRONG_STATE,
                                       status=409, field="bulk")
            if paid and bulk.state == BulkBonus.State.SETUP_UNKNOWN:
                raise ApplicationError("A set-up whose outcome was unknown was never paid by StyleCrowd: resolve it "
                                       "as not paid (and do not pay it on Prolific by hand).", code=WRONG_STATE,
                                       status=409, field="paid")
            rows = BonusPayment.objects.filter(bulk=bulk, state=BonusPayment.State.UNKNOWN)
            n = rows.count()
            if paid:
                rows.update(state=BonusPayment.State.PAID, paid_at=now, **fields)
                BulkBonus.objects.filter(pk=bulk.pk).update(state=BulkBonus.State.RESOLVED_PAID)
            else:
                rows.update(state=BonusPayment.State.PENDING, bulk=None, **fields)
                BulkBonus.objects.filter(pk=bulk.pk).update(state=BulkBonus.State.RESOLVED_UNPAID)
            return {"bulk": bulk.external_id or str(bulk.pk), "rows": n, "paid": paid}
        rows = BonusPayment.objects.filter(platform_study=platform_study, pk__in=list(payment_ids),
                                           state=BonusPayment.State.UNKNOWN)
        if rows.filter(bulk__isnull=False).exists():
            raise ApplicationError("These rows belong to a Prolific bulk bonus: resolve the bulk bonus as a whole.",
                                   code=WRONG_STATE, status=409, field="payments")
        n = rows.count()
        if n != len(set(payment_ids)):
            raise ApplicationError("Payments: some rows are not of this study or not unknown.", code=WRONG_STATE,
                                   status=409, field="payments")
        if paid:
            rows.update(state=BonusPayment.State.PAID, paid_at=now, **fields)
        else:
            rows.update(state=BonusPayment.State.PENDING, **fields)
    return {"rows": n, "paid": paid}


def _uuid_or_none(value: str) -> Any:
    import uuid

    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def ledger_csv(*, platform_study: PlatformStudy | None = None) -> str:
    """The ledger as CSV, one row per ledger row (cells neutralized against spreadsheet formulas)."""
    from annotation.services.exports import csv_cell

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "study", "platform", "worker_id", "submission", "source", "units", "amount", "currency",
                     "state", "bulk_bonus", "created_at", "paid_at", "reason", "error", "resolution"])
    qs = BonusPayment.objects.select_related("platform_study__study", "submission", "bulk").order_by("created_at")
    if platform_study is not None:
        qs = qs.filter(platform_study=platform_study)
    for row in qs:
        writer.writerow([csv_cell(v) for v in (
            row.pk, row.platform_study.study.slug, row.platform_study.platform, row.worker_id,
            row.submission.external_id if row.submission else "", row.source, row.units, f"{row.amount:.2f}",
            row.currency, row.state, row.bulk.external_id if row.bulk else "", row.created_at.isoformat(),
            row.paid_at.isoformat() if row.paid_at else "", row.reason, row.error, row.resolution)])
    return buffer.getvalue()
