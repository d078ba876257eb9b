"""Researcher side: create_study / export_responses summaries, recommendations, admin, Celery task, schema."""
from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.celery_tasks import release_expired_reservations_task
from annotation.models import Batch, Participant, Reservation, Response, Study, StudyItem
from annotation.selectors import participant_recommendations
from core.pseudonyms import pseudonym
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db


def _last_json(out: io.StringIO) -> dict:
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_create_study_from_real_stel_instances(shared_data, tmp_path):
    call_command("import_corpus", str(shared_data / "stel" / "quad_questions_char_contraction.tsv"),
                 "--name", "stel-contraction", "--format", "stel", stdout=io.StringIO())
    args = ["--slug", "contraction-pilot", "--setup", "quadruple", "--corpus", "stel-contraction", "--count", "20",
            "--screening-per-batch", "2"]
    out = io.StringIO()
    with pytest.raises(CommandError):  # no screening question yet: refused, saying how to add them
        call_command("create_study", *args, stdout=out)
    error = _last_json(out)["error"]["message"]
    assert "0 active screening question(s) fit component(s) contraction" in error
    assert "loaddata screening_questions" in error and "/admin/tasks/screeningquestion/" in error
    assert not Study.objects.exists()
    call_command("loaddata", "screening_questions", stdout=io.StringIO())
    out = io.StringIO()
    call_command("create_study", "--slug", "contraction-pilot", "--setup", "quadruple", "--corpus",
                 "stel-contraction", "--count", "20", "--seed", "7", "--annotators-per-item", "5",
                 "--items-per-batch", "14", "--screening-per-batch", "2", "--max-batches", "3", stdout=out)
    summary = _last_json(out)
    assert summary["ok"] is True and summary["items"] == 20 and summary["per_component"] == {"contraction": 20}
    study = Study.objects.get(slug="contraction-pilot")
    assert (study.annotators_per_item, study.items_per_batch, study.max_batches_per_participant) == (5, 14, 3)
    item = study.items.select_related("instance").first()
    assert item.external_id == item.instance.stel_id and item.correct_answer == item.instance.correct_answer
    assert "A1" in study.task_description and "Example" in study.task_description
    # the same seed selects the same instances
    out = io.StringIO()
    call_command("create_study", "--slug", "contraction-pilot-2", "--setup", "quadruple", "--corpus",
                 "stel-contraction", "--count", "20", "--seed", "7", stdout=out)
    assert set(Study.objects.get(slug="contraction-pilot-2").items.values_list("external_id", flat=True)) == set(
        study.items.values_list("external_id", flat=True))


def test_create_study_errors_exit_non_zero_and_store_nothing(tmp_path):
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "empty", "--setup", "triple", "--corpus", "nope", stdout=out)
    assert _last_json(out)["ok"] is False and "No task instances" in _last_json(out)["error"]["message"]
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "a", "source": "x", "rewrite": "y"}\n{"id": "b", "source": "x"\n')
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "lk", "--kind", "likert", "--items", str(bad), "--questions",
                     "gyafc", stdout=out)
    assert f"{bad}: line 2" in _last_json(out)["error"]["message"]
    qfile = tmp_path / "q.json"
    qfile.write_text('[{"name": "style", "min": 5, "max": 1}]')
    bad.write_text('{"id": "a", "source": "x", "rewrite": "y"}\n')
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", "--slug", "lk", "--kind", "likert", "--items", str(bad), "--questions",
                     str(qfile), stdout=out)
    assert "question 1" in _last_json(out)["error"]["message"]
    assert not Study.objects.exists()


def test_create_likert_study_from_files(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps({"id": f"i{n}", "source": "u r late", "rewrite": "You are late.",
                                           "system": "s"}) for n in range(3)))
    out = io.StringIO()
    call_command("create_study", "--slug", "gap", "--kind", "likert", "--items", str(items), "--questions",
                 "mind-the-style-gap", stdout=out)
    summary = _last_json(out)
    assert summary["items"] == 3 and summary["screening_per_batch"] == 0
    assert [q["name"] for q in Study.objects.get(slug="gap").questions] == ["style_change", "content_preservation"]


def test_export_responses_csv_and_jsonl(tmp_path):
    study = make_study(screening=2, per_batch=3)
    client = APIClient()
    good = P(client, study.slug, "PROLIFIC-GOOD")
    good.start()
    good.consent()
    good.play()
    bad = P(client, study.slug, "PROLIFIC-BAD")
    bad.start()
    bad.consent()
    bad.play(fail_screening=True)
    out = io.StringIO()
    call_command("export_responses", "--study", study.slug, "--format", "csv", "--out", str(tmp_path / "r.csv"),
                 stdout=out)
    summary = _last_json(out)
    assert summary["rows"] == 10
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert len(rows) == 10
    for column in ("study", "instance_id", "participant", "answer", "correct", "is_screening",
                   "participant_excluded", "answered_at", "batch"):
        assert column in rows[0]
    screening_rows = [r for r in rows if r["is_screening"] == "True"]
    assert len(screening_rows) == 4 and all(r["instance_id"].startswith("screen-") for r in screening_rows)
    # Participants leave the database as keyed pseudonyms (core.pseudonyms), never as their platform ids.
    bad_ps, good_ps = (pseudonym(platform="prolific", external_id=pid) for pid in ("PROLIFIC-BAD", "PROLIFIC-GOOD"))
    assert "PROLIFIC-" not in (tmp_path / "r.csv").read_text()
    assert {r["participant_excluded"] for r in rows if r["participant"] == bad_ps} == {"True"}
    assert {r["participant_excluded"] for r in rows if r["participant"] == good_ps} == {"False"}
    instance_ids = set(StudyItem.objects.filter(study=study).values_list("external_id", flat=True))
    assert {r["instance_id"] for r in rows if r["is_screening"] == "False"} <= instance_ids
    call_command("export_responses", "--study", study.slug, "--format", "jsonl", "--out",
                 str(tmp_path / "r.jsonl"), stdout=io.StringIO())
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(lines) == 10 and lines[0]["shown"]["texts"]
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("export_responses", "--study", "missing", "--out", str(tmp_path / "x.csv"), stdout=out)
    assert _last_json(out)["ok"] is False


def test_recommendations_follow_prolific_guidance():
    study = make_study(n_instances=20, screening=2, per_batch=5, k=5,
                       eligibility=[{"name": "native", "text": "?", "choices": ["yes", "no"], "accept": ["yes"]}])
    client = APIClient()

    def run(pid: str, fail: bool) -> P:
        p = P(client, study.slug, pid)
        p.start()
        p.consent()
        client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"native": "yes"}}, format="json")
        p.play(fail_screening=fail)
        return p

    run("ok", False)
    twice = run("twice", True)  # two failed checks in batch 1 -> reject
    assert Response.objects.filter(participant__external_id="twice", is_screening=True, is_correct=False).count() == 2
    # one failed check only: data excluded but payment approved
    once = P(client, study.slug, "once")
    once.start()
    once.consent()
    client.post(f"/api/v1/sessions/{once.token}/eligibility/", {"answers": {"native": "yes"}}, format="json")
    from annotation.selectors import reservation_expected_answer, reservation_is_screening

    failed = 0
    while (item := once.next().json()["item"]) is not None:
        expected = reservation_expected_answer(public_id=item["id"])
        if reservation_is_screening(public_id=item["id"]) and not failed:
            expected = next(c for c in item["choices"] if c != expected)
            failed = 1
        once.answer(item["id"], expected)
    screened = P(client, study.slug, "screened")
    screened.start()
    screened.consent()
    client.post(f"/api/v1/sessions/{screened.token}/eligibility/", {"answers": {"native": "no"}}, format="json")
    # a speeder: answers far faster than everybody else on the server's clock (whatever its client claims)
    Response.objects.filter(participant__external_id__in=["ok", "twice", "once"]).update(server_seconds=12.0)
    speedy = run("speedy", False)
    Response.objects.filter(participant__external_id="speedy").update(server_seconds=1.0, seconds=30.0)
    recs = {r["participant"]: r for r in participant_recommendations(study=study)}
    assert recs["ok"]["recommendation"] == "approve" and not recs["ok"]["evidence"]
    assert recs["twice"]["recommendation"] == "reject" and len(recs["twice"]["failed_checks"]) == 2
    assert "failed 2 of 2 attention checks" in recs["twice"]["evidence"][0]
    assert recs["once"]["recommendation"] == "approve" and recs["once"]["excluded"]
    assert recs["screened"]["recommendation"] == "return"
    assert recs["speedy"]["speeder"] and recs["speedy"]["recommendation"] == "approve"
    assert not recs["ok"]["speeder"]
    assert twice.token and speedy.token


def test_comprehension_check_failed_twice_asks_to_return():
    study = make_study(eligibility=[{"name": "understood", "text": "What do you match?", "choices": ["style",
                                     "topic"], "accept": ["style"], "comprehension": True}])
    client = APIClient()
    p = P(client, study.slug, "learner")
    p.start()
    p.consent()
    first = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"understood": "topic"}},
                        format="json").json()
    assert first["state"] == "eligibility"  # a second chance
    second = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"understood": "topic"}},
                         format="json").json()
    assert second["state"] == "screened_out"
    recs = {r["participant"]: r for r in participant_recommendations(study=study)}
    assert recs["learner"]["recommendation"] == "return"
    assert "comprehension check failed twice" in recs["learner"]["evidence"][0]


def test_release_task_expires_overdue_batches_idempotently():
    study = make_study(n_instances=3, per_batch=3, k=1)
    client = APIClient()
    p = P(client, study.slug, "slow")
    p.start()
    p.consent()
    item = p.next().json()["item"]
    p.answer(item["id"], "S1-S2")
    past = timezone.now() - timedelta(minutes=1)
    Batch.objects.update(expires_at=past)
    Reservation.objects.update(expires_at=past)
    fills = dict(StudyItem.objects.values_list("pk", "fill"))
    assert sorted(fills.values()) == [1, 1, 1]  # written by the reserver: each item has one holder
    # the batch expires: two unanswered slots are released outside any reservation, and their fill is recounted
    assert release_expired_reservations_task() == {"expired_batches": 1, "released_reservations": 0,
                                                   "items_recounted": 2}
    assert Batch.objects.get().state == "expired"
    assert Reservation.objects.filter(released=True).count() == 2  # the answered one keeps its slot
    assert sorted(StudyItem.objects.values_list("fill", flat=True)) == [0, 0, 1]
    assert release_expired_reservations_task() == {"expired_batches": 0, "released_reservations": 0,
                                                   "items_recounted": 0}
    from core.jobs import job_create

    job = job_create(kind="release_expired", params={})
    release_expired_reservations_task(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.result == {"expired_batches": 0, "released_reservations": 0,
                                                   "items_recounted": 0}


def test_admin_pages_and_export_action(admin_client):
    study = make_study(screening=1, per_batch=2)
    p = P(APIClient(), study.slug, "ADMINVIEW")
    p.start()
    p.consent()
    p.play()
    page = admin_client.get("/admin/annotation/study/")
    assert page.status_code == 200 and b"0 of 6 items complete" in page.content  # k = 3: one person completes nothing
    assert b"3 responses" in page.content and b"1 participants" in page.content
    assert f'href="/admin/scoring/agreementrun/study/{study.slug}/"'.encode() in page.content
    change = admin_client.get(f"/admin/annotation/study/{study.pk}/change/")
    assert change.status_code == 200 and b"ADMINVIEW" in change.content and b"approve" in change.content
    participant = Participant.objects.get(external_id="ADMINVIEW")
    assert admin_client.get(f"/admin/annotation/participant/{participant.pk}/change/").status_code == 200
    assert admin_client.get("/admin/annotation/batch/").status_code == 200
    export = admin_client.post("/admin/annotation/study/", {"action": "export_csv", "_selected_action": [study.pk]})
    assert export.status_code == 200
    body = b"".join(export.streaming_content).decode()
    assert body.startswith("study,instance_id,participant") and body.count("\n") == 4
    admin_client.post("/admin/annotation/participant/", {"action": "exclude_participants",
                                                         "_selected_action": [participant.pk]})
    assert not Response.objects.filter(is_valid=True).exists()


def test_openapi_schema_of_the_annotation_api_is_valid():
    from django.urls import include, path
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    GENERATOR_STATS.reset()
    generator = SchemaGenerator(patterns=[path("api/v1/", include("annotation.api.urls"))])
    schema = generator.get_schema(request=None, public=True)
    validate_schema(schema)
    assert not GENERATOR_STATS  # no warnings or errors for our views
    paths = schema["paths"]
    assert "/api/v1/sessions/{token}/answers/" in paths
    answer = paths["/api/v1/sessions/{token}/answers/"]["post"]
    assert {"200", "201", "400", "404", "409", "410"} <= set(answer["responses"])
    assert paths["/api/v1/studies/{slug}/sessions/"]["post"]["security"] == [{}] or \
        paths["/api/v1/studies/{slug}/sessions/"]["post"].get("security") in ([], [{}])


def test_full_project_schema_endpoint_serves(api):
    response = api.get("/api/schema/")
    assert response.status_code == 200 and b"/api/v1/sessions/{token}/next/" in response.content


def test_study_progress_counts_complete_items_pay_and_likert_people_once():
    from annotation.selectors import study_progress
    from annotation.services.studies import QUESTION_PRESETS, study_create
    from annotation.services.study_settings import study_settings_build

    study = make_study(n_instances=2, per_batch=2, k=1)
    study.estimated_minutes = 6
    study.target_hourly_pay = 12
    study.save()
    p = P(APIClient(), study.slug, "FAST")
    p.start()
    p.consent()
    p.play()
    batch = Batch.objects.get()
    Batch.objects.filter(pk=batch.pk).update(finished_at=batch.started_at + timedelta(minutes=4))
    progress = study_progress(study=study)
    assert (progress["items"], progress["items_complete"], progress["responses"]) == (2, 2, 2)
    assert progress["median_minutes_per_batch"] == 4.0
    assert progress["effective_hourly_pay"] == 18.0  # 12/h for 6 estimated minutes, done in 4
    likert = study_create(
        slug="lk-progress", item_kind="likert", eligibility_questions=[],
        items=[{"id": "a", "source": "u r late", "rewrite": "You are late."}], questions=QUESTION_PRESETS["gyafc"],
        settings=study_settings_build(annotators_per_item=1),
    )
    q = P(APIClient(), likert.slug, "RATER")
    q.start()
    q.consent()
    item = q.next().json()["item"]
    assert q.answer(item["id"], {"formality": 2, "fluency": 4, "meaning": 5}).status_code == 201
    progress = study_progress(study=likert)
    assert (progress["responses"], progress["items_complete"]) == (3, 1)  # three question rows, one person
