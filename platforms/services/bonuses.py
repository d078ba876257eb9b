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
Paying (2 to 4) is in `bonus_payments`; planning, resolving and the ledger's CSV are here.
"""
from __future__ import annotations

import csv
import io
import uuid
from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone

from annotation.error_codes import WRONG_STATE
from annotation.models import Response
from annotation.services.exports import csv_cell
from annotation.services.rewrite_corpus import accepted_rewrites
from core.errors import ApplicationError
from platforms.backends import backend_for, people_platform
from platforms.error_codes import BONUS_CAP_EXCEEDED
from platforms.models import BonusPayment, BonusRule, BulkBonus, PlatformStudy, PlatformSubmission
from platforms.services.bonus_payments import _by_worker_chunks, bonuses_pay
from platforms.services.decisions import _recommendations
from platforms.services.sync import platform_sync

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
                                        participant__platform=people_platform(platform_study.platform))
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


# --- resolving unknown outcomes (a person's answer, after checking on the platform) -----------------------------


def bonus_resolve(*, platform_study: PlatformStudy, paid: bool, bulk_id: str = "", payment_ids: Sequence[str] = (),
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
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def ledger_csv(*, platform_study: PlatformStudy | None = None) -> str:
    """The ledger as CSV, one row per ledger row (cells neutralized against spreadsheet formulas)."""

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
