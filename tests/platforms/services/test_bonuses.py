"""Money tests first: bonuses are paid exactly once whatever fails — a pay call that times out after Prolific took
it, a 5xx, a 429, a rerun, two runs at once — and a cap stops everything before anything is sent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command

from annotation.models import Participant
from core.errors import ApplicationError
from platforms.models import BonusPayment, BonusRule, BulkBonus, PlatformStudy
from platforms.services.bonuses import bonus_resolve, bonus_rule_add, platform_bonus
from platforms.services.sync import platform_sync
from tests.platforms.conftest import on_prolific, paid_study

PAY = r"/api/v1/bulk-bonus-payments/\w+/pay/"
SETUP = r"/api/v1/submissions/bonus-payments/"

pytestmark = pytest.mark.django_db


def _paid(fake: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for payment in fake.payments:
        out[payment["participant_id"]] = out.get(payment["participant_id"], 0) + payment["amount"]
    return out


def _study(prolific_account: Any, fake: Any, **fields: Any) -> PlatformStudy:
    study = paid_study()
    return on_prolific(study, prolific_account, fake, **fields)


def test_flat_bonus_is_set_up_then_paid_once(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    summary = platform_bonus(platform_study=ps, flat="0.75", apply=True)
    people = list(Participant.objects.filter(study=ps.study).values_list("external_id", flat=True))
    assert summary["rows_added"] == len(people) == 3
    assert _paid(fake_prolific) == {p: 0.75 for p in people}
    assert len(fake_prolific.calls_to("POST", SETUP)) == 1 and len(fake_prolific.calls_to("POST", PAY)) == 1
    setup_body = fake_prolific.calls_to("POST", SETUP)[0].body
    assert setup_body["study_id"] == ps.external_id
    assert sorted(setup_body["csv_bonuses"].splitlines()) == sorted(f"{p},0.75" for p in people)
    bulk = BulkBonus.objects.get(platform_study=ps)
    assert bulk.state == BulkBonus.State.PAID and bulk.external_id and bulk.pay_called_at
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.PAID}


def test_setup_outcome_unknown_pays_nothing_until_resolved(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    fake_prolific.fail("POST", SETUP, "timeout_after")
    summary = platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert summary["stopped"] == "set-up outcome unknown"
    assert fake_prolific.calls_to("POST", PAY) == []
    bulk = BulkBonus.objects.get()
    assert bulk.state == BulkBonus.State.SETUP_UNKNOWN and not bulk.external_id
    with pytest.raises(ApplicationError, match="never paid"):
        bonus_resolve(platform_study=ps, paid=True, bulk_id=str(bulk.pk))
    bonus_resolve(platform_study=ps, paid=False, bulk_id=str(bulk.pk), note="no bonus on Prolific")
    platform_bonus(platform_study=ps, flat="0.50", apply=True)
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert sorted(_paid(fake_prolific).values()) == [0.5, 0.5, 0.5]


def test_the_bonus_command_run_twice_pays_once(prolific_account, fake_prolific, capsys) -> None:
    ps = _study(prolific_account, fake_prolific)
    call_command("platform_bonus", "--study", ps.study.slug, "--flat", "0.40", "--apply")
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    call_command("platform_bonus", "--study", ps.study.slug, "--flat", "0.40", "--apply")
    second = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert first["ok"] and first["rows_added"] == 3 and first["calls_made"] == 2
    assert second["ok"] and second["rows_added"] == 0 and second["calls_made"] == 0
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert sorted(_paid(fake_prolific).values()) == [0.4, 0.4, 0.4]


def test_a_dry_run_shows_the_calls_and_sends_nothing(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific)
    before = len(fake_prolific.calls)
    summary = platform_bonus(platform_study=ps, flat="0.40")
    assert summary["dry_run"] and summary["rows_added"] == 3 and summary["amount_added"] == "1.20"
    assert summary["calls"][0]["path"] == SETUP.replace("\\", "") and "csv_bonuses" in summary["calls"][0]["body"]
    assert "/pay/" in summary["calls"][1]["path"]
    sent = [c for c in fake_prolific.calls[before:] if c.method != "GET"]
    assert sent == [] and BonusPayment.objects.count() == 0


def test_a_cap_exceeded_sends_nothing_and_stores_nothing(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific, bonus_cap_per_participant=Decimal("0.50"))
    with pytest.raises(ApplicationError) as exc:
        platform_bonus(platform_study=ps, flat="0.60", apply=True)
    assert exc.value.code == "bonus_cap_exceeded" and "0.50" in exc.value.message
    assert BonusPayment.objects.count() == 0 and fake_prolific.calls_to("POST", SETUP) == []
    # Within the cap it pays; a second flat bonus that would cross it is refused whole.
    platform_bonus(platform_study=ps, flat="0.30", apply=True)
    with pytest.raises(ApplicationError, match="cap per participant"):
        platform_bonus(platform_study=ps, flat="0.30", label="second", apply=True)
    assert BonusPayment.objects.count() == 3 and len(fake_prolific.calls_to("POST", PAY)) == 1


def test_the_study_cap_counts_the_whole_ledger(prolific_account, fake_prolific) -> None:
    ps = _study(prolific_account, fake_prolific, bonus_cap_per_study=Decimal("2.00"))
    platform_bonus(platform_study=ps, flat="0.50", apply=True)  # 1.50
    with pytest.raises(ApplicationError) as exc:
        platform_bonus(platform_study=ps, flat="0.50", label="again", apply=True)  # would be 3.00
    assert exc.value.code == "bonus_cap_exceeded" and "3.00" in exc.value.message
    assert BonusPayment.objects.count() == 3


def test_rules_pay_only_what_was_earned_since(prolific_account, fake_prolific) -> None:
    # p1 and p2 answered item 2 correctly (S2-S1), everyone item 1: correct items per person 2, 1, 2.
    ps = _study(prolific_account, fake_prolific)
    bonus_rule_add(platform_study=ps, kind=BonusRule.Kind.PER_CORRECT_ITEM, amount="0.10")
    platform_bonus(platform_study=ps, apply=True)
    assert sorted(_paid(fake_prolific).values()) == [0.1, 0.2, 0.2]
    summary = platform_bonus(platform_study=ps, apply=True)
    assert summary["rows_added"] == 0 and len(fake_prolific.calls_to("POST", PAY)) == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_pay_once(prolific_account, fake_prolific) -> None:
    """Two runners (threads with their own database connections) apply the same bonus at the same moment."""
    from django.db import connection

    ps = _study(prolific_account, fake_prolific)
    platform_sync(platform_study=ps)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            platform_bonus(platform_study=PlatformStudy.objects.get(pk=ps.pk), flat="0.25", apply=True, sync=False)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(_paid(fake_prolific).values()) == [0.25, 0.25, 0.25]
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert BonusPayment.objects.count() == 3


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_command_processes_at_once_pay_once(prolific_account, fake_prolific) -> None:
    """Two `platform_bonus --apply` processes started together (as two workers would) pay each person once."""
    ps = _study(prolific_account, fake_prolific)
    platform_sync(platform_study=ps)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
           "DATABASE_URL": _test_database_url(), "STYLECROWD_ENCRYPTION_KEY": settings.STYLECROWD_ENCRYPTION_KEY,
           "PLATFORM_HTTP_TIMEOUT_SECONDS": "5"}
    cmd = [sys.executable, "manage.py", "platform_bonus", "--study", ps.study.slug, "--flat", "0.30", "--apply",
           "--no-sync"]
    procs = [subprocess.Popen(cmd, cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert all(s["ok"] for s in summaries), outs
    assert sorted(_paid(fake_prolific).values()) == [0.3, 0.3, 0.3]
    assert len(fake_prolific.calls_to("POST", PAY)) == 1
    assert sum(s["rows_added"] for s in summaries) == 3


def _test_database_url() -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def test_caps_and_rules_from_the_command_line(prolific_account, fake_prolific, capsys) -> None:
    ps = _study(prolific_account, fake_prolific)
    with pytest.raises(Exception):  # noqa: B017 - the command exits non-zero with the JSON error line
        call_command("platform_bonus", "--study", ps.study.slug, "--rule", "per_correct_item=0.40",
                     "--cap-per-participant", "0.50", "--apply")
    error = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert error["ok"] is False and error["error"]["code"] == "bonus_cap_exceeded"
    assert BonusPayment.objects.count() == 0 and fake_prolific.calls_to("POST", SETUP) == []
    call_command("platform_bonus", "--study", ps.study.slug, "--cap-per-participant", "none", "--apply")
    done = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert done["ok"] and done["rows_added"] == 3
    assert sorted(_paid(fake_prolific).values()) == [0.4, 0.8, 0.8]
