"""annotation.services.sessions through the participant JSON API: the session's states (create, consent, eligibility,
start, next, the endings), per-kind items, serving order and every error case. Answers: test_answers.py."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Batch, Participant, Reservation, Response, StudyItem
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 (fixture)
from tests.helpers import assert_api_error

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("serving_path")]

ELIGIBILITY = [{"name": "native", "text": "Is English your native language?", "choices": ["yes", "no"],
                "accept": ["yes"]}]


@pytest.fixture
def client() -> APIClient:
    return APIClient(enforce_csrf_checks=True)


def test_full_batch_reaches_completion_code(client):
    study = make_study(screening=2, per_batch=4, eligibility=ELIGIBILITY)
    p = P(client, study.slug, "PID-1")
    body = p.start()
    assert body["state"] == "consent"
    assert body["study"]["eligibility_questions"] == [
        {"name": "native", "text": "Is English your native language?", "choices": ["yes", "no"]}
    ]
    assert "accept" not in str(body["study"])
    assert p.consent()["state"] == "eligibility"
    response = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"native": "yes"}}, format="json")
    assert response.json()["state"] == "instructions"
    seen = p.play()
    assert len(seen) == 6  # 4 instances + 2 screening questions, indistinguishable
    assert {tuple(sorted(i)) for i in seen} == {("choices", "id", "kind", "position", "texts")}
    assert all(set(i["texts"]) == {"anchor_1", "anchor_2", "sentence_1", "sentence_2"} for i in seen)
    assert all(i["choices"] == ["S1-S2", "S2-S1"] for i in seen)
    final = p.next().json()
    assert final["item"] is None and final["state"] == "completed"
    assert final["completion_code"] == "DONE123"
    assert final["redirect_url"] == "https://app.prolific.com/submissions/complete?cc=DONE123"
    assert Response.objects.filter(participant__external_id="PID-1").count() == 6
    assert Response.objects.filter(is_screening=True, is_correct=True).count() == 2
    assert Response.objects.filter(is_screening=False, is_correct=True, is_valid=True).count() == 4


def test_error_cases_answer_with_json_errors(client):
    study = make_study()
    p = P(client, study.slug, "PID-4")
    p.start()
    # answering before consent: wrong state
    r = p.answer("whatever", "S1-S2")
    assert assert_api_error(r, code="wrong_state", status=409)["details"] == {"state": "consent"}
    r = client.post(f"/api/v1/sessions/{p.token}/consent/", {"agree": "maybe"}, format="json")
    assert_api_error(r, code="invalid", status=400)  # (false declines: test_endings.py)
    p.consent()
    item = p.next().json()["item"]
    # forged token
    for path in ("", "next/", "consent/"):
        r = client.get(f"/api/v1/sessions/forged-token-123/{path}") if path != "consent/" else \
            client.post(f"/api/v1/sessions/forged-token-123/{path}", {"agree": True}, format="json")
        assert_api_error(r, code="not_found", status=404)
    # an item not reserved for this session (another participant's)
    q = P(client, study.slug, "PID-5")
    q.start()
    q.consent()
    other_item = q.next().json()["item"]
    r = p.answer(other_item["id"], "S1-S2")
    assert_api_error(r, code="not_reserved", status=404)
    # invalid values
    for bad in ("S1", "", 3, None, ["S1-S2"], {"a": 1}):
        r = p.answer(item["id"], bad)
        assert_api_error(r, code="invalid", status=400)
    r = client.post(f"/api/v1/sessions/{p.token}/answers/", {"answer": "S1-S2"}, format="json")
    assert "item" in assert_api_error(r, code="invalid", status=400)["details"]
    # unknown study, bad platform
    r = client.post("/api/v1/studies/nope/sessions/", {"participant": "x"}, format="json")
    assert r.status_code == 404
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": "x", "platform": "icq"}, format="json")
    assert_api_error(r, code="invalid", status=400)
    assert not Response.objects.exists()


@pytest.mark.parametrize("endpoint, status", [("start", 410), ("consent", 409)])
def test_an_overdue_batch_is_expired_by_start_and_consent_too(client, endpoint, status):
    study = make_study(n_instances=2, per_batch=2, k=1)
    p = P(client, study.slug, f"PID-late-{endpoint}")
    p.start()
    p.consent()
    assert p.next().json()["item"] is not None
    Reservation.objects.filter(batch__token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    Batch.objects.filter(token=p.token).update(expires_at=timezone.now() - timedelta(seconds=1))
    body = {"agree": True} if endpoint == "consent" else {}
    r = client.post(f"/api/v1/sessions/{p.token}/{endpoint}/", body, format="json")
    assert r.status_code == status, r.content
    # the expiry was committed although the request failed: the state and the released slots stay
    assert Batch.objects.get(token=p.token).state == Batch.State.EXPIRED
    assert not Reservation.objects.filter(batch__token=p.token, released=False).exists()


def test_expired_without_cleanup_is_not_live(client):
    """The engine treats an expired reservation as free even if nobody marked it (no Celery beat needed)."""
    study = make_study(n_instances=1, per_batch=1, k=1)
    p = P(client, study.slug, "PID-8")
    p.start()
    p.consent()
    p.next()
    Reservation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    q = P(client, study.slug, "PID-9")
    q.start()
    q.consent()
    item = q.next().json()["item"]
    assert item is not None
    assert Reservation.objects.filter(released=True).count() == 1  # released under the item's lock
    assert q.answer(item["id"], "S1-S2").status_code == 201


def test_eligibility_failure_screens_out(client):
    study = make_study(eligibility=ELIGIBILITY)
    study.screened_out_code = "NOPE42"
    study.save()
    p = P(client, study.slug, "PID-10")
    p.start()
    p.consent()
    r = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"native": "maybe", "x": "1"}},
                    format="json")
    error = assert_api_error(r, code="invalid", status=400)
    assert error["details"] == {"native": ["choose one of: yes, no"],
                                "unknown": ["answers to questions this study does not ask: 1"]}
    assert error["message"] == ("Please answer these questions with one of their choices: Is English your native "
                                "language? — answers to questions this study does not ask: 1")
    r = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"native": "no"}}, format="json")
    body = r.json()
    assert body["state"] == "screened_out" and body["completion_code"] == "NOPE42"
    assert body["redirect_url"].endswith("cc=NOPE42")
    assert p.next().json()["item"] is None
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": "PID-10", "platform": "prolific"},
                    format="json")
    assert_api_error(r, code="screened_out", status=403)


def test_returning_participant_gets_open_session_then_new_batch_then_refusal(client):
    study = make_study(n_instances=6, per_batch=2, k=2, max_batches=2)
    p = P(client, study.slug, "PID-11")
    first = p.start()
    again = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": "PID-11", "platform": "prolific"},
                        format="json")
    assert again.status_code == 200 and again.json()["token"] == first["token"]
    p.consent()
    items_1 = {Reservation.objects.get(public_id=i["id"]).study_item_id for i in p.play()}
    second = p.start()
    assert second["batch"] == 2 and second["token"] != first["token"]
    p.consent()
    items_2 = {Reservation.objects.get(public_id=i["id"]).study_item_id for i in p.play()}
    assert not items_1 & items_2  # never the same instance twice
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": "PID-11", "platform": "prolific"},
                    format="json")
    assert_api_error(r, code="no_work_available", status=409)


def test_same_family_is_not_served_twice_unless_allowed(client):
    from annotation.services.studies import study_create
    from annotation.services.study_settings import study_settings_build
    from tests.factories import TaskInstanceFactory

    quad = TaskInstanceFactory(family="fam-1")
    TaskInstanceFactory(corpus=quad.corpus, family="fam-1", setup="triple", correct_order="S1-S2")
    triple_study = study_create(
        slug="mixed", item_kind="quadruple", eligibility_questions=[],
        settings=study_settings_build(screening_per_batch=0, items_per_batch=5),
    )
    StudyItem.objects.create(study=triple_study, external_id="extra", kind="quadruple", family="fam-1",
                             payload={"anchor_1": "a", "anchor_2": "b", "sentence_1": "c", "sentence_2": "d"},
                             correct_answer="S1-S2")
    p = P(client, "mixed", "PID-12")
    p.start()
    p.consent()
    assert len(p.play()) == 1  # two items of family fam-1 exist; only one is served


def test_fewest_responses_first(client):
    study = make_study(n_instances=4, per_batch=2, k=3)
    a = P(client, study.slug, "A")
    a.start()
    a.consent()
    first = {Reservation.objects.get(public_id=i["id"]).study_item_id for i in a.play()}
    b = P(client, study.slug, "B")
    b.start()
    b.consent()
    second = {Reservation.objects.get(public_id=i["id"]).study_item_id for i in b.play()}
    assert not first & second and len(first | second) == 4


def test_anonymous_link_and_mturk_refs(client):
    study = make_study()
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"platform": "anonymous"}, format="json")
    assert r.status_code == 201
    assert Participant.objects.get(platform="anonymous").external_id.startswith("anon-")
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/",
                    {"participant": "W1", "platform": "mturk", "study_ref": "HIT9", "session_ref": "ASG9"},
                    format="json")
    batch = Batch.objects.get(token=r.json()["token"])
    assert (batch.hit, batch.assignment) == ("HIT9", "ASG9")
    r = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"platform": "prolific"}, format="json")
    assert "participant" in assert_api_error(r, code="invalid", status=400)["details"]


def test_ping_and_researcher_endpoints_are_admin_only(client, admin_user):
    assert client.get("/api/v1/ping/").json() == {"ok": True}
    study = make_study()
    assert client.get(f"/api/v1/studies/{study.slug}/").status_code in (401, 403)
    assert client.get(f"/api/v1/studies/{study.slug}/participants/").status_code in (401, 403)
    client.force_authenticate(admin_user)
    p = P(APIClient(), study.slug, "PID-13")
    p.start()
    p.consent()
    p.play()
    progress = client.get(f"/api/v1/studies/{study.slug}/").json()
    assert progress["responses"] == 4 and progress["participants"] == 1 and progress["batches_completed"] == 1
    export = client.get(f"/api/v1/studies/{study.slug}/responses/?format=jsonl")
    assert export.status_code == 200
    lines = b"".join(export.streaming_content).decode().strip().splitlines()
    assert len(lines) == 4
    bad = client.get(f"/api/v1/studies/{study.slug}/responses/?format=xml")
    assert bad.status_code == 400


def test_responses_export_of_a_study_without_answers_is_empty_not_an_error(api):
    study = make_study()
    jsonl = api.get(f"/api/v1/studies/{study.slug}/responses/?format=jsonl")
    assert jsonl.status_code == 200
    assert jsonl["Content-Type"] == "application/x-ndjson"
    assert b"".join(jsonl.streaming_content) == b""
    csv = api.get(f"/api/v1/studies/{study.slug}/responses/?format=csv")
    assert csv.status_code == 200
    assert b"".join(csv.streaming_content).decode().splitlines()[0].startswith("study")


def test_triple_and_quadruple_forms_of_one_draw_go_to_different_people_unless_allowed(client):
    from annotation.services.studies import study_create
    from annotation.services.study_settings import study_settings_build
    from tests.factories import CorpusFactory, TaskInstanceFactory

    quads = TaskInstanceFactory.create_batch(3, corpus=CorpusFactory())
    for quad in quads:
        TaskInstanceFactory(corpus=quad.corpus, family=quad.family, setup="triple", correct_order="S1-S2",
                            anchor_2="")
    corpus = [quads[0].corpus.name]
    study_create(
        slug="quad", item_kind="quadruple", corpus=corpus, eligibility_questions=[],
        settings=study_settings_build(screening_per_batch=0, items_per_batch=3),
    )
    study_create(
        slug="trip", item_kind="triple", corpus=corpus, eligibility_questions=[],
        settings=study_settings_build(screening_per_batch=0, items_per_batch=3),
    )
    study_create(
        slug="trip-open", item_kind="triple", corpus=corpus, eligibility_questions=[],
        settings=study_settings_build(screening_per_batch=0, items_per_batch=3, allow_multiple_setups=True),
    )
    p = P(client, "quad", "SAME-PERSON")
    p.start()
    p.consent()
    assert len(p.play()) == 3
    r = client.post("/api/v1/studies/trip/sessions/", {"participant": "SAME-PERSON", "platform": "prolific"},
                    format="json")
    assert_api_error(r, code="no_work_available", status=409)
    other = P(client, "trip", "OTHER-PERSON")
    other.start()
    other.consent()
    items = other.play()
    assert len(items) == 3 and all(set(i["texts"]) == {"anchor_1", "sentence_1", "sentence_2"} for i in items)
    assert all(i["choices"] == ["S1", "S2"] for i in items)
    allowed = P(client, "trip-open", "SAME-PERSON")
    allowed.start()
    allowed.consent()
    assert len(allowed.play()) == 3


def test_fill_follows_the_holders_and_stale_fills_still_serve(client, django_capture_on_commit_callbacks):
    """`fill` orders the candidates. An exclusion recounts it once committed; a fill left high (a release whose
    recount never ran) still lets the item be served, its free slot counted from the reservations."""
    from annotation.services.answers import participant_exclude

    study = make_study(n_instances=4, per_batch=2, k=2)

    def play(pid: str) -> set[int]:
        p = P(client, study.slug, pid)
        p.start()
        p.consent()
        return {Reservation.objects.get(public_id=i["id"]).study_item_id for i in p.play()}

    a_items = play("FILL-A")
    fills = dict(StudyItem.objects.filter(study=study).values_list("pk", "fill"))
    assert {pk for pk, fill in fills.items() if fill == 1} == a_items and sorted(fills.values()) == [0, 0, 1, 1]
    with django_capture_on_commit_callbacks(execute=True):
        participant_exclude(participant=Participant.objects.get(external_id="FILL-A"), reason="test")
    assert sorted(StudyItem.objects.filter(study=study).values_list("fill", flat=True)) == [0, 0, 0, 0]
    b_items = play("FILL-B")
    # B's slots released behind the engine's back: their fill stays 1 although nobody holds them
    Reservation.objects.filter(participant__external_id="FILL-B").update(released=True)
    Response.objects.filter(participant__external_id="FILL-B").update(is_valid=False)
    assert {pk for pk, fill in StudyItem.objects.filter(study=study).values_list("pk", "fill") if fill} == b_items
    served = set()
    for pid in ("FILL-C", "FILL-D", "FILL-E", "FILL-F"):
        served |= play(pid)
    # 4 items × k=2 = 8 free slots: four more people fill every one of them, stale fills included
    assert served == set(fills)
    per_item = Response.objects.filter(study=study, is_valid=True).values_list("study_item_id", flat=True)
    assert sorted(per_item) == sorted([pk for pk in fills for _ in range(2)])
    assert sorted(StudyItem.objects.filter(study=study).values_list("fill", flat=True)) == [2, 2, 2, 2]
