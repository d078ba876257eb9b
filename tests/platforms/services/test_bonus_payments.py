"""platforms.services.bonus_payments: the pay step of a bonus run sends each call once, whatever fails after it was
sent — a timeout after Prolific took it, a 5xx, a reset connection, a crash — and marks it unknown for a person to
resolve; a 429 (nothing sent) pays on the next run, once."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from core.errors import ApplicationError
from platforms.models import BonusPayment, BulkBonus
from platforms.services.bonuses import bonus_resolve, platform_bonus
from tests.platforms.services.test_bonuses import PAY, SETUP, _paid, _study

pytestmark = pytest.mark.django_db


def test_pay_call_timing_out_after_prolific_took_it_is_never_sent_again(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "timeout_after")  # Prolific pays, the answer comes after the client gave up
    summary = platform_bonus(platform_study=ps, flat="1.00", apply=True)
    assert summary["stopped"] == "pay outcome unknown"
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert len(fake_prolific.payments) == 3  # the fake did pay
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.UNKNOWN}
    bulk = BulkBonus.objects.get(platform_study=ps)
    assert bulk.state == BulkBonus.State.PAY_UNKNOWN

    # Running again sends nothing at all while the outcome is unknown, and says why.
    with pytest.raises(ApplicationError) as exc:
        platform_bonus(platform_study=ps, flat="1.00", apply=True)
    assert exc.value.code == "unknown_outcome"
    assert len(fake_prolific.calls_to("POST", PAY)) == 1 and len(fake_prolific.payments) == 3

    # The researcher checks on Prolific and resolves it as paid: nothing more is ever paid for these rows.
    bonus_resolve(platform_study=ps, paid=True, bulk_id=bulk.external_id, note="seen on Prolific's bonus page")
    summary = platform_bonus(platform_study=ps, flat="1.00", apply=True)
    assert summary["rows_added"] == 0 and summary["calls_made"] == 0
    assert len(fake_prolific.calls_to("POST", PAY)) == 1 and len(fake_prolific.payments) == 3
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.PAID}


def test_a_5xx_on_pay_is_unknown_and_not_retried(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "500", times=3)
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert summary["stopped"] == "pay outcome unknown"
    assert len(fake_prolific.calls_to("POST", PAY)) == 1  # one call, no automatic second one
    assert BonusPayment.objects.filter(state=BonusPayment.State.UNKNOWN).count() == 3


def test_a_connection_reset_after_sending_is_unknown(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "reset_after")
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert summary["stopped"] == "pay outcome unknown"
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert BonusPayment.objects.filter(state=BonusPayment.State.UNKNOWN).count() == 3


def test_a_429_on_pay_pays_nothing_and_the_next_run_pays_once(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", PAY, "429", retry_after=1)
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert len(fake_prolific.calls_to("POST", PAY)) == 1 and fake_prolific.payments == []
    assert "429" in summary["errors"][0]
    assert BonusPayment.objects.filter(state=BonusPayment.State.PENDING).count() == 3
    assert BulkBonus.objects.get().state == BulkBonus.State.PAY_FAILED  # that set-up is never paid
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True)  # a person runs it again
    assert summary["rows_added"] == 0
    assert len(fake_prolific.calls_to("POST", SETUP)) == 2 and len(fake_prolific.calls_to("POST", PAY)) == 2
    assert sorted(_paid(fake_prolific).values()) == [0.5, 0.5, 0.5]
    paid_bulks = [b for b in fake_prolific.bulk_bonuses.values() if b["paid_times"]]
    assert len(paid_bulks) == 1 and paid_bulks[0]["paid_times"] == 1


def test_a_crashed_pay_step_becomes_unknown_not_a_second_call(prolific_account, fake_prolific) -> None:
    """A worker killed after committing "paying" and before recording the answer: the next run must not pay."""
    ps = _study(prolific_account, fake_prolific)
    platform_bonus(platform_study=ps, flat="0.20")  # dry run: nothing
    bulk = BulkBonus.objects.create(platform_study=ps, external_id="f" * 24, state=BulkBonus.State.PAYING,
                                    csv="x,0.20\n", total=Decimal("0.20"), currency="GBP",
                                    pay_called_at=timezone.now() - timedelta(hours=1))
    BonusPayment.objects.create(platform_study=ps, worker_id="x", source="flat:old", amount=Decimal("0.20"),
                                currency="GBP", state=BonusPayment.State.CLAIMED, bulk=bulk)
    with pytest.raises(ApplicationError, match="unknown outcome"):
        platform_bonus(platform_study=ps, flat="0.20", apply=True)
    bulk.refresh_from_db()
    assert bulk.state == BulkBonus.State.PAY_UNKNOWN and fake_prolific.calls_to("POST", PAY) == []
