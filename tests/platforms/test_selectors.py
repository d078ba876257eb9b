"""A study's platform side for its overview (platforms/selectors.py `study_platform_overview`): places × reward, the
platform's fee as an estimate on rewards and bonuses, bonuses paid / owed / unknown, unknown decisions, people who
returned, the platform's hourly floor; in a fixed number of queries."""
from __future__ import annotations

from decimal import Decimal

import pytest

from platforms.models import BonusPayment, Decision, PlatformAccount, PlatformStudy, PlatformSubmission
from platforms.selectors import study_platform_overview
from tests import factories as f

pytestmark = pytest.mark.django_db


def _platform_study(platform: str = "prolific", currency: str = "GBP") -> PlatformStudy:
    account = PlatformAccount.objects.create(name=f"lab-{platform}", platform=platform)
    return PlatformStudy.objects.create(study=f.StudyFactory(), account=account, platform=platform,
                                        currency=currency, state=PlatformStudy.State.PUBLISHED, external_id="e1",
                                        places=10, reward_cents=150)


def test_money_with_a_paid_a_pending_and_an_unknown_bonus(django_assert_num_queries) -> None:  # noqa: ANN001
    ps = _platform_study()
    for state, amount, worker in ((BonusPayment.State.PAID, "1.00", "w1"), (BonusPayment.State.PENDING, "0.50", "w2"),
                                  (BonusPayment.State.CLAIMED, "0.20", "w3"),
                                  (BonusPayment.State.UNKNOWN, "0.25", "w4"),
                                  (BonusPayment.State.FAILED, "9.00", "w5")):
        BonusPayment.objects.create(platform_study=ps, worker_id=worker, source="flat:x", amount=Decimal(amount),
                                    currency="GBP", state=state)
    returned = PlatformSubmission.objects.create(platform_study=ps, external_id="s1", worker_id="w1",
                                                 status="RETURNED")
    PlatformSubmission.objects.create(platform_study=ps, external_id="s2", worker_id="w2", status="TIMED-OUT")
    approved = PlatformSubmission.objects.create(platform_study=ps, external_id="s3", worker_id="w3",
                                                 status="APPROVED")
    Decision.objects.create(platform_study=ps, submission=approved, worker_id="w3", kind="approve", state="sent")
    Decision.objects.create(platform_study=ps, submission=returned, worker_id="w1", kind="return", state="unknown")
    with django_assert_num_queries(7):
        facts = study_platform_overview(study=ps.study)
    assert facts is not None
    assert (facts["places"], facts["reward"], facts["rewards"]) == (10, Decimal("1.50"), Decimal("15.00"))
    bonuses = facts["bonuses"]
    assert (bonuses["paid"], bonuses["pending"], bonuses["unknown"]) == (Decimal("1.00"), Decimal("0.70"),
                                                                         Decimal("0.25"))
    # Prolific's fee on rewards and every bonus that may be paid (paid, owed, unknown), not the refused one
    assert facts["fee"] == ((Decimal("15.00") + Decimal("1.95")) * Decimal("0.3333")).quantize(Decimal("0.01"))
    assert (facts["decisions_sent"], facts["decisions_unknown"], facts["left"]) == (2, 1, 2)
    assert facts["hourly_floor"] == Decimal("6.00")


def test_mturk_has_its_fee_and_no_floor_and_a_study_off_platform_has_no_side() -> None:
    ps = _platform_study("mturk", "USD")
    facts = study_platform_overview(study=ps.study)
    assert facts is not None and facts["fee"] == Decimal("3.00") and facts["hourly_floor"] is None
    assert study_platform_overview(study=f.StudyFactory()) is None
