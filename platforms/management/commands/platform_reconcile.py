"""python manage.py platform_reconcile --study SLUG (--bulk ID | --payment ID … | --decision SUBMISSION)
                                       (--paid | --not-paid) [--note TEXT]
python manage.py platform_reconcile --study SLUG --list

A person's answer for calls whose outcome was unknown, after checking on the platform: a Prolific bulk bonus or MTurk
bonus rows seen paid (or not: they are paid by the next run; MTurk with the same UniqueRequestToken), a decision seen
done (or not). Nothing is sent by this command."""
from __future__ import annotations

from typing import Any

from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from platforms.management.commands._study_command import PlatformStudyCommand
from platforms.models import BonusPayment, BulkBonus, CallState, Decision
from platforms.services.bonuses import bonus_resolve
from platforms.services.decisions import decision_resolve


class Command(PlatformStudyCommand):
    help = "Resolve bonus rows and decisions whose outcome is unknown (after checking on the platform)."

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument("--list", action="store_true", help="List what has an unknown outcome.")
        parser.add_argument("--bulk", default="", help="Prolific bulk bonus id (or StyleCrowd's id of it).")
        parser.add_argument("--payment", nargs="*", default=[], help="Ledger row ids (MTurk).")
        parser.add_argument("--decision", default="", help="Submission / assignment id of the decision.")
        done = parser.add_mutually_exclusive_group()
        done.add_argument("--paid", action="store_true", help="Seen paid / done on the platform.")
        done.add_argument("--not-paid", action="store_true", help="Seen not paid / not done on the platform.")
        parser.add_argument("--note", default="")

    def run(self, **o: Any) -> dict[str, Any]:
        ps = self.platform_study(o["study"])
        if o["list"]:
            return {"study": ps.study.slug, "bulk_bonuses": [
                {"id": str(b.pk), "prolific_id": b.external_id, "state": b.state, "total": f"{b.total:.2f}",
                 "rows": b.payments.count(), "error": b.error}
                for b in BulkBonus.objects.filter(platform_study=ps, state__in=[
                    BulkBonus.State.PAY_UNKNOWN, BulkBonus.State.SETUP_UNKNOWN])],
                "payments": [{"id": str(p.pk), "worker": p.worker_id, "amount": f"{p.amount:.2f}", "error": p.error}
                             for p in BonusPayment.objects.filter(platform_study=ps, bulk__isnull=True,
                                                                  state=BonusPayment.State.UNKNOWN)],
                "decisions": [{"submission": d.submission.external_id, "kind": d.kind, "error": d.error}
                              for d in Decision.objects.filter(platform_study=ps, state=CallState.UNKNOWN)]}
        if not (o["paid"] or o["not_paid"]):
            raise ApplicationError("--paid or --not-paid: say what you saw on the platform.")
        if o["decision"]:
            decision = Decision.objects.filter(platform_study=ps, submission__external_id=o["decision"]).first()
            if decision is None:
                raise ApplicationError(f"--decision: no decision on {o['decision']}.", code=NOT_FOUND, status=404)
            decision = decision_resolve(decision=decision, done=o["paid"], note=o["note"])
            return {"decision": o["decision"], "state": decision.state}
        if not (o["bulk"] or o["payment"]):
            raise ApplicationError("--bulk, --payment or --decision: what to resolve.")
        return bonus_resolve(platform_study=ps, paid=o["paid"], bulk_id=o["bulk"], payment_ids=o["payment"],
                             note=o["note"])
