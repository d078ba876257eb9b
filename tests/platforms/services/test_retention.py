"""Retention: a closed study whose payments are settled and whose period has passed keeps person keys instead of raw
platform ids, and loses persona answers, eligibility answers and telemetry detail (their k-anonymous aggregates
kept). The command, the beat task, the conditions that hold it back, idempotence, and a scan of every table."""
from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.models import Batch, Participant, Response, Study, WorkerBlock
from annotation.services.review import worker_admission_check
from core.errors import ApplicationError
from core.models import Job
from core.pseudonyms import is_pseudonym, person_key
from platforms.celery_tasks import retention_apply_task
from platforms.models import (
    BonusPayment,
    BulkBonus,
    CallState,
    Decision,
    PlatformAccount,
    PlatformStudy,
    PlatformSubmission,
    WebhookEvent,
)
from platforms.services.lists import block_list_members
from platforms.services.retention import retention_apply
from tests import factories as f
from tests.platforms.conftest import hex_pid

pytestmark = pytest.mark.django_db

CLOSED_LONG_AGO = timezone.now() - timedelta(days=400)


def settled_study(*, slug: str = "retained", closed_at: Any = CLOSED_LONG_AGO, first_pid: int = 1) -> Study:
    """A closed Prolific study of three people (24-hex ids) with persona answers, telemetry, eligibility answers,
    and every money row sent and paid: decisions, a bonus ledger, a bulk bonus CSV, a webhook and an admin log."""
    study = f.StudyFactory(slug=slug, status=Study.Status.CLOSED, closed_at=closed_at, platform="prolific",
                           allow_anonymous=False, annotators_per_item=3, min_correct=2)
    f.annotated_study(answers=[["S2-S1"] * 3, ["S2-S1", "S1-S2", "S2-S1"]], study=study)
    people = list(Participant.objects.filter(study=study).order_by("external_id"))
    account, _ = PlatformAccount.objects.get_or_create(name="lab", platform="prolific",
                                                       defaults={"token_env": "PROLIFIC_API_TOKEN"})
    platform_study = PlatformStudy.objects.create(study=study, account=account, platform="prolific",
                                                  state=PlatformStudy.State.PUBLISHED,
                                                  external_id=f"{slug}-on-prolific",
                                                  allow_list={"participants": [hex_pid(first_pid)]})
    personas = [{"age": "18-24", "gender": "woman"}, {"age": "18-24", "gender": "man"},
                {"age": "25-34", "gender": "woman"}]
    csv_lines = []
    for n, (person, persona) in enumerate(zip(people, personas, strict=True)):
        pid = hex_pid(first_pid + n)
        Participant.objects.filter(pk=person.pk).update(external_id=pid, persona=persona)
        Response.objects.filter(participant=person).update(telemetry={"keys": 40, "pastes": 0, "worker": pid})
        Batch.objects.create(study=study, participant=person, number=1, token=f"{slug}-tok-{n}",
                             state=Batch.State.COMPLETED, eligibility_answers={"native": "yes"},
                             session_ref=f"{slug}-session-{n}", finished_at=closed_at)
        submission = PlatformSubmission.objects.create(
            platform_study=platform_study, external_id=f"{slug}-sub-{n}", worker_id=pid, participant=person,
            status="APPROVED", raw={"participant_id": pid, "id": f"{slug}-sub-{n}"})
        Decision.objects.create(platform_study=platform_study, submission=submission, worker_id=pid, kind="approve",
                                state=CallState.SENT, request={"participant_id": pid}, finished_at=closed_at)
        BonusPayment.objects.create(platform_study=platform_study, worker_id=pid, submission=submission,
                                    source="flat:thanks", amount=Decimal("0.50"), currency="GBP",
                                    state=BonusPayment.State.PAID, paid_at=closed_at)
        csv_lines.append(f"{pid},0.50")
    BulkBonus.objects.create(platform_study=platform_study, external_id=f"{slug}-bulk", state=BulkBonus.State.PAID,
                             csv="\n".join(csv_lines), total=Decimal("1.50"), currency="GBP",
                             pay_called_at=closed_at, finished_at=closed_at)
    WebhookEvent.objects.create(account=account, event_id=f"{slug}-event", event_type="submission.status.change",
                                resource_id=f"{slug}-sub-0", payload={"participant_id": hex_pid(first_pid)})
    LogEntry.objects.create(user=get_user_model().objects.create(username=f"{slug}-admin"),
                            content_type=ContentType.objects.get_for_model(Participant), object_id=str(people[0].pk),
                            object_repr=f"prolific:{hex_pid(first_pid)}", action_flag=CHANGE, change_message="[]")
    Job.objects.create(kind="platform_sync", params={"study": slug},
                       result={"unknown_people": [hex_pid(first_pid + 1)]})
    f.AgreementRunFactory(study=study, result={"participants": [{"external_id": hex_pid(first_pid + 2)}]})
    return study


def raw_ids_anywhere(raw_ids: list[str]) -> list[str]:
    """Every text and JSON column of every model (the registry walked) that still holds one of the ids."""
    found = []
    for model in apps.get_models():
        if not model._meta.managed or model._meta.proxy:
            continue
        for field in model._meta.concrete_fields:
            if not isinstance(field, (models.CharField, models.TextField, models.JSONField)):
                continue
            rows = model._default_manager.annotate(_text=Cast(field.name, models.TextField()))
            for raw in raw_ids:
                if rows.filter(_text__contains=raw).exists():
                    found.append(f"{model._meta.label}.{field.name}: {raw}")
    return found


def run_command(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("retention_apply", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_the_dry_run_says_what_would_change_and_changes_nothing():
    study = settled_study()
    before = sorted(Participant.objects.filter(study=study).values_list("external_id", flat=True))

    summary = run_command()

    assert summary["apply"] is False and summary["would_apply"] == 1
    row = summary["studies"][0]
    assert row["study"] == "retained" and row["state"] == "would_apply"
    assert row["changes"]["ids_replaced"] == 3
    assert row["changes"]["persona_answers"] == 3 and row["changes"]["eligibility_answers"] == 3
    assert row["changes"]["telemetry_details"] == Response.objects.filter(study=study).count()
    assert row["changes"]["rows_changed"]["annotation.Participant"] == 3
    assert sorted(Participant.objects.filter(study=study).values_list("external_id", flat=True)) == before
    assert Participant.objects.filter(study=study).exclude(persona={}).count() == 3
    study.refresh_from_db()
    assert study.retention_applied_at is None
    assert not any(raw in json.dumps(summary) for raw in before)  # the summary itself names nobody
    # The scan sees them where the fixture put them (so its empty answer after --apply means something).
    held = "\n".join(raw_ids_anywhere(before))
    for table in ("annotation.Participant.external_id", "platforms.BulkBonus.csv", "platforms.WebhookEvent.payload",
                  "admin.LogEntry.object_repr", "core.Job.result", "scoring.AgreementRun.result",
                  "annotation.Response.telemetry"):
        assert table in held


def test_apply_replaces_ids_deletes_persona_and_telemetry_and_keeps_money():
    study = settled_study()
    raws = [hex_pid(n) for n in (1, 2, 3)]
    amounts = sorted(BonusPayment.objects.values_list("amount", flat=True))

    summary = run_command("--apply")

    assert summary["applied_now"] == 1 and summary["studies"][0]["state"] == "applied_now"
    keys = {person_key(platform="prolific", external_id=raw) for raw in raws}
    assert set(Participant.objects.filter(study=study).values_list("external_id", flat=True)) == keys
    assert set(PlatformSubmission.objects.values_list("worker_id", flat=True)) == keys
    assert set(Decision.objects.values_list("worker_id", flat=True)) == keys
    assert set(BonusPayment.objects.values_list("worker_id", flat=True)) == keys
    # Money keeps its amounts, states and the platform's references.
    assert sorted(BonusPayment.objects.values_list("amount", flat=True)) == amounts
    assert set(BonusPayment.objects.values_list("state", flat=True)) == {BonusPayment.State.PAID}
    assert sorted(PlatformSubmission.objects.values_list("external_id", flat=True)) == [
        "retained-sub-0", "retained-sub-1", "retained-sub-2"]
    bulk = BulkBonus.objects.get()
    assert bulk.external_id == "retained-bulk" and bulk.total == Decimal("1.50")
    assert sorted(line.split(",")[0] for line in bulk.csv.splitlines()) == sorted(keys)
    # Persona, eligibility and telemetry detail are gone; the telemetry status and the answers stay.
    assert not Participant.objects.filter(study=study).exclude(persona={}).exists()
    assert not Batch.objects.filter(study=study).exclude(eligibility_answers={}).exists()
    assert not Response.objects.filter(study=study, telemetry__isnull=False).exists()
    assert Response.objects.filter(study=study).count() == 6
    # The card's aggregates: only cells of at least k people (k = 5 here: three people, so all withheld).
    study.refresh_from_db()
    aggregates = study.selection["persona_aggregates"]
    assert aggregates["people"] == 3 and aggregates["k"] == 5
    assert aggregates["attributes"]["age"] == {"values": {}, "withheld": 3}
    assert study.retention_applied_at is not None
    assert raw_ids_anywhere(raws) == []


def test_aggregates_keep_cells_of_k_people_and_merge_the_rest(settings):
    settings.STYLECROWD_K_ANONYMITY = 2
    study = settled_study()
    run_command("--apply", "--study", "retained")
    study.refresh_from_db()
    attributes = study.selection["persona_aggregates"]["attributes"]
    # age: 18-24 ×2 kept, 25-34 ×1 withheld (alone below k); gender: woman ×2 kept, man ×1 withheld.
    assert attributes["age"] == {"values": {"18-24": 2}, "withheld": 1}
    assert attributes["gender"] == {"values": {"woman": 2}, "withheld": 1}


def test_the_beat_task_applies_it_and_records_a_status_row():
    study = settled_study()
    result = retention_apply_task()
    job = Job.objects.get(kind="retention_apply")
    assert job.status == Job.Status.DONE and job.created_by == "beat"
    assert job.result == result and result["applied_now"] == 1
    study.refresh_from_db()
    assert study.retention_applied_at is not None
    assert raw_ids_anywhere([hex_pid(n) for n in (1, 2, 3)]) == []


def test_a_second_run_changes_nothing():
    study = settled_study()
    retention_apply(apply=True)
    study.refresh_from_db()
    first = study.retention_applied_at
    aggregates = study.selection["persona_aggregates"]

    again = retention_apply(apply=True, study=study)

    assert again["applied_now"] == 0 and again["studies"][0]["state"] == "applied"
    assert retention_apply(apply=True)["studies"] == []  # an applied study is no longer a candidate
    study.refresh_from_db()
    assert study.retention_applied_at == first and study.selection["persona_aggregates"] == aggregates


@pytest.mark.parametrize("case", ["open", "not_due", "own_period_not_due", "decision_pending", "decision_unknown",
                                  "bonus_unknown", "bulk_pay_unknown", "bulk_set_up", "awaiting_review",
                                  "publish_unknown"])
def test_nothing_happens_to_a_study_that_is_not_due_or_not_settled(case):
    study = settled_study()
    platform_study = PlatformStudy.objects.get(study=study)
    expected = "blocked"
    if case == "open":
        Study.objects.filter(pk=study.pk).update(status=Study.Status.ACTIVE, closed_at=None)
        expected = None  # an open study is not even a candidate
    elif case == "not_due":
        Study.objects.filter(pk=study.pk).update(closed_at=timezone.now() - timedelta(days=10))
        expected = "not_due"
    elif case == "own_period_not_due":
        Study.objects.filter(pk=study.pk).update(retention_days=1000)
        expected = "not_due"
    elif case == "decision_pending":
        Decision.objects.filter(submission__external_id="retained-sub-0").update(state=CallState.PENDING)
    elif case == "decision_unknown":
        Decision.objects.filter(submission__external_id="retained-sub-0").update(state=CallState.UNKNOWN)
    elif case == "bonus_unknown":
        BonusPayment.objects.filter(worker_id=hex_pid(1)).update(state=BonusPayment.State.UNKNOWN)
    elif case == "bulk_pay_unknown":
        BulkBonus.objects.update(state=BulkBonus.State.PAY_UNKNOWN)
    elif case == "bulk_set_up":
        BulkBonus.objects.update(state=BulkBonus.State.SET_UP)
    elif case == "awaiting_review":
        Decision.objects.filter(submission__external_id="retained-sub-1").delete()
        PlatformSubmission.objects.filter(external_id="retained-sub-1").update(status="AWAITING REVIEW")
    elif case == "publish_unknown":
        PlatformStudy.objects.filter(pk=platform_study.pk).update(state=PlatformStudy.State.PUBLISH_UNKNOWN)

    summary = run_command("--apply")

    states = [row["state"] for row in summary["studies"]]
    assert states == ([expected] if expected else [])
    if case.endswith("unknown"):
        assert any("unknown outcome" in b or "unknown" in b for b in summary["studies"][0]["blockers"])
    assert summary["applied_now"] == 0
    study.refresh_from_db()
    assert study.retention_applied_at is None
    assert Participant.objects.filter(study=study, external_id=hex_pid(1), persona__age="18-24").exists()
    assert PlatformSubmission.objects.filter(worker_id=hex_pid(1)).exists()


def test_a_late_bonus_restarts_the_period():
    study = settled_study()
    BonusPayment.objects.filter(worker_id=hex_pid(1)).update(paid_at=timezone.now() - timedelta(days=3))
    assert retention_apply(apply=True, study=study)["studies"][0]["state"] == "not_due"


def test_people_of_another_study_keep_their_ids_there_and_blocks_hold_by_key():
    retained = settled_study()
    # hex_pid(3) also took part in a later study still open; hex_pid(1) was blocked.
    other = f.StudyFactory(slug="later", platform="prolific", allow_anonymous=False)
    f.ParticipantFactory(study=other, external_id=hex_pid(3))
    WorkerBlock.objects.create(platform="prolific", external_id=hex_pid(1), reason="rejected rewrites")
    WorkerBlock.objects.create(platform="prolific", external_id=hex_pid(3), reason="rejected rewrites")

    changes = retention_apply(apply=True)["studies"][0]["changes"]

    assert changes["ids_kept_for_other_studies"] == 1
    assert Participant.objects.filter(study=other, external_id=hex_pid(3)).exists()
    assert not Participant.objects.filter(study=retained, external_id=hex_pid(3)).exists()
    assert set(WorkerBlock.objects.values_list("external_id", flat=True)) == {
        person_key(platform="prolific", external_id=hex_pid(1)), hex_pid(3)}
    # The platform's block list can hold raw ids only; StyleCrowd's door still refuses the person by key.
    assert block_list_members(platform="prolific") == {hex_pid(3)}
    with pytest.raises(ApplicationError) as refused:
        worker_admission_check(study=other, platform="prolific", participant_id=hex_pid(1))
    assert refused.value.code == "blocked"
    assert raw_ids_anywhere([hex_pid(1), hex_pid(2)]) == []


def test_a_late_platform_report_about_a_retained_study_stores_the_key():
    from platforms.backends.base import SubmissionInfo
    from platforms.services.sync import submission_apply

    study = settled_study()
    retention_apply(apply=True)
    platform_study = PlatformStudy.objects.get(study=study)

    class Backend:
        LEFT: frozenset[str] = frozenset()
        WITHDRAWN: frozenset[str] = frozenset()

    submission_apply(platform_study=platform_study, backend=Backend(), info=SubmissionInfo(
        external_id="retained-sub-9", worker_id=hex_pid(9), status="APPROVED", raw={"participant_id": hex_pid(9)}))

    row = PlatformSubmission.objects.get(external_id="retained-sub-9")
    assert is_pseudonym(row.worker_id) and row.raw == {}
    assert raw_ids_anywhere([hex_pid(9)]) == []
