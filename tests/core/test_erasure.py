"""Erasure on request across every app (core/erasure.py): after --apply the raw id is nowhere, in no column of any
model (the model registry walked) and in no file under MEDIA_ROOT; a dry run changes nothing; an unknown id erases
nothing; the command, the API's job and the tombstone's effects."""
from __future__ import annotations

import json
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.management import CommandError, call_command
from django.db import models

from annotation.models import Participant, Response, WorkerBlock
from core.erasure import erasures_after, participant_erase, text_columns
from core.models import ErasureTombstone, Job, PersonalDataAccess
from core.pseudonyms import person_key
from platforms.models import (
    BonusPayment,
    BulkBonus,
    Decision,
    PlatformAccount,
    PlatformStudy,
    PlatformSubmission,
    WebhookEvent,
)
from tasks.models import ParallelPair
from tests import factories as f
from tests.helpers import assert_api_error

RAW = "5f0c1e2d3b4a5968778a9b0c"  # a Prolific-like id
OTHER = "60aa11bb22cc33dd44ee55ff"

pytestmark = pytest.mark.django_db


def rows_mentioning(raw_id: str) -> dict[str, int]:
    """Every text, char and JSON column of every row of every model, scanned in Python for the id."""
    found: dict[str, int] = {}
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        columns = [c.attname for c in text_columns(model)]
        if not columns:
            continue
        for values in model._default_manager.values_list(*columns):
            if any(raw_id in (v if isinstance(v, str) else json.dumps(v)) for v in values if v is not None):
                found[model._meta.label] = found.get(model._meta.label, 0) + 1
    return found


def media_mentioning(raw_id: str) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file() and (raw_id in p.name or raw_id.encode() in p.read_bytes())]


@pytest.fixture
def media(settings, tmp_path):  # noqa: ANN001, ANN201
    settings.MEDIA_ROOT = str(tmp_path / "media")
    Path(settings.MEDIA_ROOT).mkdir()
    return Path(settings.MEDIA_ROOT)


def person_everywhere(media: Path) -> dict[str, object]:
    """The person in two studies, a rewrite corpus, the platform's ledger, jobs, the admin log and media files."""
    study_a, items_a = f.annotated_study(answers=[["S2-S1", "S2-S1", "S1-S2"]])
    study_b, _ = f.annotated_study(answers=[["S2-S1", "S1-S2"]])
    for study in (study_a, study_b):
        Participant.objects.filter(study=study, external_id="p0").update(external_id=RAW, persona={"age": "30-39"})
        Participant.objects.filter(study=study, external_id="p1").update(external_id=OTHER)
    person = Participant.objects.get(study=study_a, external_id=RAW)
    Response.objects.filter(participant=person).update(telemetry={"keys": 40, "who": RAW})
    WorkerBlock.objects.create(platform="prolific", external_id=RAW, reason="copied")
    corpus = f.CorpusFactory()
    pair = ParallelPair.objects.create(corpus=corpus, position=0, source_id="s#1", text_1="source", text_2="rewrite",
                                       metadata={"writer": {"participant": RAW, "platform": "prolific"}})
    instance = f.TaskInstanceFactory(corpus=corpus, sentence_pair=pair, sentence_1="rewrite")
    account = PlatformAccount.objects.create(name="lab", platform="prolific")
    platform_study = PlatformStudy.objects.create(study=study_a, account=account, platform="prolific",
                                                  external_id="st1")
    submission = PlatformSubmission.objects.create(platform_study=platform_study, external_id="sub1", worker_id=RAW,
                                                   participant=person, status="APPROVED",
                                                   raw={"participant_id": RAW, "id": "sub1"})
    Decision.objects.create(platform_study=platform_study, submission=submission, worker_id=RAW, kind="approve",
                            request={"participant_id": RAW})
    bulk = BulkBonus.objects.create(platform_study=platform_study, csv=f"{RAW},1.50\n{OTHER},1.00",
                                    total=Decimal("2.5"), currency="GBP")
    BonusPayment.objects.create(platform_study=platform_study, worker_id=RAW, submission=submission, source="flat:x",
                                amount=Decimal("1.50"), currency="GBP", bulk=bulk)
    WebhookEvent.objects.create(account=account, event_id="e1", payload={"participant_id": RAW})
    Job.objects.create(kind="corpus_import", params={"note": f"for {RAW}"}, task_args=[RAW])
    from django.contrib.auth.models import User

    LogEntry.objects.create(user=User.objects.create_user("staff"),
                            content_type=ContentType.objects.get_for_model(Participant), object_id=str(person.pk),
                            object_repr=str(person), action_flag=ADDITION, change_message=f"[{RAW}]")
    PersonalDataAccess.objects.create(door="admin", what=f"participant {RAW}", people=1)
    (media / "exports").mkdir()
    (media / "exports" / "responses.csv").write_text(f"participant,answer\n{RAW},S2-S1\n{OTHER},S1-S2\n")
    (media / "exports" / "votes.parquet").write_bytes(b"PAR1\x00" + RAW.encode() + b"\x00\xff")
    return {"study_a": study_a, "study_b": study_b, "items_a": items_a, "instance": instance, "pair": pair,
            "submission": submission}


def test_after_apply_the_raw_id_is_in_no_column_of_any_model_and_no_media_file(media):
    world = person_everywhere(media)
    assert rows_mentioning(RAW)  # the scan finds what is there
    summary = participant_erase(platform="prolific", external_id=RAW, apply=True, requested_by="dpo",
                                reason="withdrawal")
    assert rows_mentioning(RAW) == {}
    assert media_mentioning(RAW) == []
    key = person_key(platform="prolific", external_id=RAW)
    assert summary["person_key"] == key and RAW not in json.dumps(summary)
    assert summary["tables"]["annotation.Participant"] == 2
    assert summary["tables"]["annotation.Response"] == 2
    assert summary["tables"]["tasks.ParallelPair"] == 1
    assert summary["tables"]["platforms.BonusPayment"] == 1
    assert set(summary["studies"]) == {world["study_a"].pk, world["study_b"].pk}
    # money keeps its amounts and the platform's references, under the person key
    payment = BonusPayment.objects.get()
    assert (payment.worker_id, payment.amount) == (key, Decimal("1.50"))
    assert PlatformSubmission.objects.get().external_id == "sub1"
    assert BulkBonus.objects.get().csv == f"{key},1.50\n{OTHER},1.00"
    # the other participant is untouched, in the database and in the text file
    assert Participant.objects.filter(external_id=OTHER).count() == 2
    assert (media / "exports" / "responses.csv").read_text() == f"participant,answer\n{key},S2-S1\n{OTHER},S1-S2\n"
    assert not (media / "exports" / "votes.parquet").exists()  # not text: deleted, not half-edited
    # the instance built from the rewrite is withdrawn, not silently kept
    world["instance"].refresh_from_db()
    assert world["instance"].status == "withdrawn" and "withdrawn" in world["instance"].metadata
    assert world["instance"].sentence_pair_id is None and world["instance"].sentence_1 != "rewrite"
    tombstone = ErasureTombstone.objects.get()
    assert (tombstone.person_key, tombstone.platform, tombstone.requested_by) == (key, "prolific", "dpo")
    assert sorted(tombstone.study_ids) == sorted([world["study_a"].pk, world["study_b"].pk])


def test_a_dry_run_changes_nothing_and_says_what_would_go(media):
    person_everywhere(media)
    before = rows_mentioning(RAW)
    summary = participant_erase(platform="prolific", external_id=RAW, apply=False)
    assert summary["applied"] is False
    assert summary["tables"]["annotation.Participant"] == 2
    assert summary["imported"] == {"participants": 0, "ratings": 0}  # said even where no import holds the id
    assert summary["mentions_replaced"]["core.Job"] == 1
    assert summary["media_files"] == 2
    assert rows_mentioning(RAW) == before
    assert len(media_mentioning(RAW)) == 2
    assert not ErasureTombstone.objects.exists()


def test_an_unknown_id_erases_nothing_with_a_clear_message(media):
    person_everywhere(media)
    with pytest.raises(Exception) as caught:
        participant_erase(platform="prolific", external_id="ffffffffffffffffffffffff", apply=True)
    assert caught.value.code == "nothing_to_erase" and caught.value.status == 404
    assert "nothing was erased" in caught.value.message
    assert "nor for an imported annotator with this id" in caught.value.message
    assert not ErasureTombstone.objects.exists()
    assert Participant.objects.filter(external_id=RAW).count() == 2


def test_the_command_dry_runs_by_default_and_applies_with_a_json_summary(media):
    person_everywhere(media)
    out = StringIO()
    call_command("erase_participant", "--platform", "prolific", "--id", RAW, stdout=out)
    dry = json.loads(out.getvalue().strip().splitlines()[-1])
    assert dry["ok"] and dry["applied"] is False and Participant.objects.filter(external_id=RAW).count() == 2
    out = StringIO()
    call_command("erase_participant", "--platform", "prolific", "--id", RAW, "--apply", "--reason", "asked", stdout=out)
    done = json.loads(out.getvalue().strip().splitlines()[-1])
    assert done["applied"] is True and done["tombstone"] == ErasureTombstone.objects.get().pk
    assert not Participant.objects.filter(external_id=RAW).exists()
    with pytest.raises(CommandError):  # nothing is left: a second run is refused, non-zero
        call_command("erase_participant", "--platform", "prolific", "--id", RAW, "--apply", stdout=StringIO())


def test_the_api_queues_a_job_whose_params_keep_no_raw_id(api, media, settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    person_everywhere(media)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/participants/erase/", {"platform": "prolific", "id": RAW, "apply": True},
                            format="json")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status == "done", job.error
    assert RAW not in json.dumps([job.params, job.result, job.task_args])
    assert rows_mentioning(RAW) == {}
    assert_api_error(api.post("/api/v1/participants/erase/", {"platform": "prolific", "id": "unknown0000"},
                              format="json"), code="nothing_to_erase", status=404)


def test_the_api_takes_platform_imported_and_the_job_result_says_how_many_imported(
        api, media, settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    study = f.StudyFactory(slug="imp")
    person = f.ParticipantFactory(study=study, platform="imported", external_id=RAW)
    f.ResponseFactory(participant=person, study_item__study=study)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/participants/erase/", {"platform": "imported", "id": RAW, "apply": True},
                            format="json")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.status == "done", job.error
    assert job.result["imported"] == {"participants": 1, "ratings": 1} and job.result["platform"] == "imported"
    assert RAW not in json.dumps([job.params, job.result])
    assert job.params["external_id"] == person_key(platform="imported", external_id=RAW)
    assert not Participant.objects.filter(external_id=RAW).exists()


def test_the_api_needs_the_personal_data_permission_and_the_right_to_delete_participants(client, media):
    from django.contrib.auth.models import Permission, User

    user = User.objects.create_user("researcher", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="delete_participant"))
    client.force_login(user)
    body = {"platform": "prolific", "id": RAW}
    assert client.post("/api/v1/participants/erase/", body, content_type="application/json").status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="view_personal_data"))
    user = User.objects.get(pk=user.pk)
    client.force_login(user)
    assert client.post("/api/v1/participants/erase/", body, content_type="application/json").status_code == 404


def test_runs_made_before_an_erasure_count_it(media):
    world = person_everywhere(media)
    run = f.AgreementRunFactory(study=world["study_a"])
    assert erasures_after(study_id=world["study_a"].pk, at=run.created_at) == 0
    participant_erase(platform="prolific", external_id=RAW, apply=True)
    assert erasures_after(study_id=world["study_a"].pk, at=run.created_at) == 1
    later = f.AgreementRunFactory(study=world["study_a"])
    assert erasures_after(study_id=world["study_a"].pk, at=later.created_at) == 0
    assert erasures_after(study_id=f.StudyFactory().pk, at=run.created_at) == 0


def test_text_columns_cover_char_text_and_json_fields():
    labels = {c.name for c in text_columns(Participant)}
    assert {"external_id", "persona", "platform"} <= labels
    assert all(isinstance(c, models.CharField | models.TextField | models.JSONField) for c in text_columns(Job))
