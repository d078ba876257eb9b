"""platforms' eraser and the tombstone's effects (platforms/services/erasure.py): money rows keep amounts and
references under the person key; after an erasure a sync or a webhook about the person stores only the key."""
from __future__ import annotations

from decimal import Decimal

import pytest

from core.models import ErasureTombstone
from core.pseudonyms import person_key
from platforms.backends.base import SubmissionInfo
from platforms.models import BonusPayment, PlatformAccount, PlatformStudy, PlatformSubmission
from platforms.services.erasure import erased_scrub, erased_worker_id
from platforms.services.sync import submission_apply
from tests import factories as f

pytestmark = pytest.mark.django_db
RAW = "5f0c1e2d3b4a5968778a9b0c"


class Backend:
    LEFT: tuple = ()
    WITHDRAWN: tuple = ()
    DECIDED: dict = {}


def _tombstone() -> str:
    key = person_key(platform="prolific", external_id=RAW)
    ErasureTombstone.objects.create(person_key=key, platform="prolific", erased_at="2026-01-01T00:00:00Z")
    return key


def test_a_sync_after_the_erasure_stores_only_the_person_key():
    key = _tombstone()
    account = PlatformAccount.objects.create(name="lab", platform="prolific")
    platform_study = PlatformStudy.objects.create(study=f.StudyFactory(), account=account, platform="prolific")
    info = SubmissionInfo(external_id="sub9", worker_id=RAW, status="APPROVED", raw={"participant_id": RAW})
    result = submission_apply(platform_study=platform_study, info=info, backend=Backend())
    row = PlatformSubmission.objects.get()
    assert (row.worker_id, row.raw, result["known"]) == (key, {"participant_id": key}, False)
    assert erased_worker_id(platform="prolific", worker_id="another") == "another"
    assert erased_scrub(platform="prolific", value={"a": [RAW, "x"]}) == {"a": [key, "x"]}
    assert erased_scrub(platform="mturk", value={"a": RAW}) == {"a": RAW}  # another platform, another person


def test_the_eraser_keeps_amounts_and_references_under_the_key():
    from core.erasure import participant_erase

    account = PlatformAccount.objects.create(name="lab", platform="prolific")
    platform_study = PlatformStudy.objects.create(study=f.StudyFactory(), account=account, platform="prolific",
                                                  external_id="st1")
    sub = PlatformSubmission.objects.create(platform_study=platform_study, external_id="sub1", worker_id=RAW,
                                            status="APPROVED")
    BonusPayment.objects.create(platform_study=platform_study, worker_id=RAW, submission=sub, source="flat:x",
                                amount=Decimal("2.00"), currency="GBP")
    summary = participant_erase(platform="prolific", external_id=RAW, apply=True)
    key = person_key(platform="prolific", external_id=RAW)
    assert summary["tables"] == {"platforms.BonusPayment": 1, "platforms.PlatformSubmission": 1}
    assert summary["studies"] == [platform_study.study_id]
    assert list(BonusPayment.objects.values_list("worker_id", "amount")) == [(key, Decimal("2.00"))]
    assert PlatformSubmission.objects.get().external_id == "sub1"
