"""Who may see personal data: every admin page and API body that shows people is scanned for the participants' raw
platform ids, as a researcher (pseudonyms only, persona answers and telemetry withheld, nothing logged) and as a
researcher who is also a data steward (raw ids, one access-log row per page or body)."""
from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Batch, PracticeAnswer, PracticeItem, Response, WorkerBlock
from core.models import PersonalDataAccess
from core.personal_data_doors import people_redact
from core.pseudonyms import person_key
from core.roles import roles_sync
from platforms.models import (
    BonusPayment,
    CallState,
    Decision,
    PlatformAccount,
    PlatformMessage,
    PlatformStudy,
    PlatformSubmission,
)
from tests import factories as f

pytestmark = pytest.mark.django_db
RAW_IDS = ["5f0c0ffee0000000000000a1", "5f0c0ffee0000000000000b2", "5f0c0ffee0000000000000c3"]
PERSONA_VALUE = "Rhode-Island-persona-answer"
TELEMETRY_VALUE = 7919  # a count no page shows by chance


@pytest.fixture
def world() -> dict[str, Any]:
    study = f.StudyFactory()
    item = f.StudyItemFactory(study=study)
    people = [f.ParticipantFactory(study=study, external_id=raw, persona={"state": PERSONA_VALUE})
              for raw in RAW_IDS]
    responses = []
    for n, person in enumerate(people):
        batch = Batch.objects.create(study=study, participant=person, number=1, token=f"{n}" * 40,
                                     eligibility_answers={"state": PERSONA_VALUE})
        responses.append(Response.objects.create(study=study, participant=person, study_item=item, batch=batch,
                                                 answer="S1-S2", answered_at=timezone.now(),
                                                 telemetry={"keystrokes": TELEMETRY_VALUE}))
    practice = PracticeItem.objects.create(study=study, anchor_1="a", anchor_2="b", sentence_1="c", sentence_2="d",
                                           correct_answer="S1-S2")
    PracticeAnswer.objects.create(participant=people[0], item=practice, answer="S1-S2", is_correct=True)
    WorkerBlock.objects.create(platform="prolific", external_id=RAW_IDS[2], reason="copied")
    account = PlatformAccount.objects.create(name="lab", platform="prolific", token_env="PD_TEST_NO_TOKEN",
                                             api_url="http://127.0.0.1:9/")
    ps = PlatformStudy.objects.create(study=study, account=account, platform="prolific", state="published",
                                      external_id="e" * 24)
    for n, person in enumerate(people):
        sub = PlatformSubmission.objects.create(platform_study=ps, external_id=f"{n}" * 24,
                                                worker_id=person.external_id, participant=person, status="APPROVED")
        Decision.objects.create(platform_study=ps, submission=sub, worker_id=sub.worker_id, kind="approve",
                                state=CallState.SENT, request={"participant_id": sub.worker_id})
        BonusPayment.objects.create(platform_study=ps, worker_id=sub.worker_id, submission=sub, source=f"flat:{n}",
                                    amount=1, currency="GBP", state="paid")
    PlatformMessage.objects.create(platform_study=ps, group_key=uuid.uuid4(), recipients=RAW_IDS[:2], body="hi")
    roles_sync()
    users = {}
    for name, groups in {"researcher": ["researcher"], "steward": ["researcher", "data steward"],
                         "viewer": ["viewer"]}.items():
        users[name] = User.objects.create_user(name, password="pw", is_staff=True)
        users[name].groups.add(*Group.objects.filter(name__in=groups))
    users["superuser"] = User.objects.create_user("superuser", password="pw", is_staff=True, is_superuser=True)
    return {"study": study, "people": people, "responses": responses, "ps": ps, "users": users}


def _client(world: dict[str, Any], role: str) -> Client:
    client = Client()
    client.force_login(world["users"][role])
    return client


def _admin_pages(world: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """Page → (url, how many people it shows)."""
    person, response = world["people"][0], world["responses"][0]
    batch = Batch.objects.get(participant=person)
    return {
        "participants": (reverse("admin:annotation_participant_changelist"), 3),
        "participant": (reverse("admin:annotation_participant_change", args=[person.pk]), 1),
        "participant history": (reverse("admin:annotation_participant_history", args=[person.pk]), 1),
        "batches": (reverse("admin:annotation_batch_changelist"), 3),
        "batch": (reverse("admin:annotation_batch_change", args=[batch.pk]), 1),
        "responses": (reverse("admin:annotation_response_changelist"), 3),
        "response": (reverse("admin:annotation_response_change", args=[response.pk]), 1),
        "practice answers": (reverse("admin:annotation_practiceanswer_changelist"), 1),
        "worker blocks": (reverse("admin:annotation_workerblock_changelist"), 1),
        "study": (reverse("admin:annotation_study_change", args=[world["study"].pk]), 3),
        "submissions": (reverse("admin:platforms_platformsubmission_changelist"), 3),
        "decisions": (reverse("admin:platforms_decision_changelist"), 3),
        "decision": (reverse("admin:platforms_decision_change", args=[Decision.objects.first().pk]), 1),
        "ledger": (reverse("admin:platforms_bonuspayment_changelist"), 3),
        "message": (reverse("admin:platforms_platformmessage_change", args=[PlatformMessage.objects.get().pk]), 2),
    }


def _api_bodies(world: dict[str, Any]) -> dict[str, tuple[str, int]]:
    slug = world["study"].slug
    return {
        "participants": (reverse("study-participants", kwargs={"slug": slug}), 3),
        "decisions": (reverse("study-platform-decisions", kwargs={"slug": slug}), 3),
        "ledger": (reverse("study-platform-bonuses", kwargs={"slug": slug}), 3),
        "messages": (reverse("study-platform-messages", kwargs={"slug": slug}), 2),
    }


def _raw_in(text: str) -> set[str]:
    return {raw for raw in RAW_IDS if raw in text}


@pytest.mark.parametrize("role", ["researcher", "viewer"])
def test_without_the_permission_every_door_shows_pseudonyms_and_logs_nothing(world, role: str) -> None:
    client = _client(world, role)
    pseudonyms = {person_key(platform="prolific", external_id=raw) for raw in RAW_IDS}
    for name, (url, _) in {**_admin_pages(world), **_api_bodies(world)}.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        text = response.content.decode()
        assert _raw_in(text) == set(), name
        assert PERSONA_VALUE not in text and str(TELEMETRY_VALUE) not in text, name
        if name != "message":  # its only personal data, the recipients, is withheld whole
            assert any(pseudonym in text for pseudonym in pseudonyms), name
    assert PersonalDataAccess.objects.count() == 0


def test_with_the_permission_raw_ids_are_shown_and_each_look_logged(world) -> None:
    client = _client(world, "steward")
    doors = {**{("admin", k): v for k, v in _admin_pages(world).items()},
             **{("api", k): v for k, v in _api_bodies(world).items()}}
    for (door, name), (url, people) in doors.items():
        before = PersonalDataAccess.objects.count()
        response = client.get(url)
        assert response.status_code == 200, name
        assert _raw_in(response.content.decode()), name
        rows = list(PersonalDataAccess.objects.order_by("-pk")[: PersonalDataAccess.objects.count() - before])
        assert len(rows) == 1, (door, name)
        assert (rows[0].door, rows[0].people, rows[0].username) == (door, people, "steward"), name
    page = client.get(reverse("admin:annotation_participant_change", args=[world["people"][0].pk])).content.decode()
    assert PERSONA_VALUE in page
    response = client.get(reverse("admin:annotation_response_change", args=[world["responses"][0].pk]))
    assert str(TELEMETRY_VALUE) in response.content.decode()


def test_a_page_that_shows_nobody_writes_no_log_row(world) -> None:
    client = _client(world, "steward")
    assert client.get(reverse("admin:annotation_study_changelist")).status_code == 200
    assert client.get(reverse("admin:platforms_platformmessage_changelist")).status_code == 200
    assert PersonalDataAccess.objects.count() == 0


def test_search_by_raw_id_needs_the_permission_and_pseudonyms_find_everyone(world) -> None:
    url = reverse("admin:annotation_participant_changelist")
    raw = RAW_IDS[1]
    steward, researcher = _client(world, "steward"), _client(world, "researcher")
    assert steward.get(url, {"q": raw}).context["cl"].result_count == 1
    assert researcher.get(url, {"q": raw}).context["cl"].result_count == 0
    key = person_key(platform="prolific", external_id=raw)
    for client in (steward, researcher):
        cl = client.get(url, {"q": key}).context["cl"]
        assert [p.external_id for p in cl.result_list] == [raw]
    responses = researcher.get(reverse("admin:annotation_response_changelist"), {"q": key}).context["cl"]
    assert responses.result_count == 1


def test_the_review_queue_block_accepts_a_pseudonym(world) -> None:
    raw = RAW_IDS[0]
    client = _client(world, "superuser")
    client.post(reverse("admin:annotation_rewritereview_block"),
                {"worker": f"prolific:{person_key(platform='prolific', external_id=raw)}", "reason": "r"})
    assert WorkerBlock.objects.filter(platform="prolific", external_id=raw).exists()


def test_the_ledger_csv_action_puts_pseudonyms_in_without_the_permission(world) -> None:
    url = reverse("admin:platforms_bonuspayment_changelist")
    ids = list(BonusPayment.objects.values_list("pk", flat=True))
    for role, raw_expected in (("researcher", False), ("steward", True)):
        response = _client(world, role).post(url, {"action": "export_csv", "_selected_action": ids})
        assert response.status_code == 200
        assert bool(_raw_in(response.content.decode())) is raw_expected, role
    assert PersonalDataAccess.objects.filter(what="bonus ledger CSV", people=3).count() == 1


def test_the_access_log_admin_is_read_by_superusers_and_stewards_only(world) -> None:
    url = reverse("admin:core_personaldataaccess_changelist")
    assert _client(world, "superuser").get(url).status_code == 200
    assert _client(world, "steward").get(url).status_code == 200
    assert _client(world, "researcher").get(url).status_code == 403
    assert _client(world, "viewer").get(url).status_code == 403
    row = PersonalDataAccess.objects.create(door="api", what="x", people=1)
    assert _client(world, "superuser").get(
        reverse("admin:core_personaldataaccess_change", args=[row.pk])).status_code == 200
    assert _client(world, "superuser").post(reverse("admin:core_personaldataaccess_add")).status_code == 403


def test_redaction_replaces_whole_ids_only() -> None:
    key = person_key(platform="prolific", external_id="P1")
    body = {"P1": ["prolific:P1", "P10", "xP1", {"request": "to P1."}]}
    assert people_redact(body, pseudonyms={"P1": key}) == {key: [f"prolific:{key}", "P10", "xP1",
                                                                 {"request": f"to {key}."}]}
