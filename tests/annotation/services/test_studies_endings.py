"""Codes and endings that pay people right, and screening that cannot be silently absent.

Independent screened-out codes (service, model constraint, data migration), the declined ending recorded on the
server, per-platform codes and redirects, no-answer participants never "approve", the decision CSVs (Prolific and
MTurk shapes, formula injection neutralized) through the CLI, the API and the admin, screening questions required
per component and setup, and per-component task descriptions as the session payload serves them.
"""
from __future__ import annotations

import csv
import importlib
import io
import json

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.test import Client as DjangoClient
from rest_framework.test import APIClient

from annotation.models import Batch, Reservation, Response, Study
from annotation.selectors import participant_recommendations
from annotation.services.descriptions import COMPONENT_TEXTS
from annotation.services.exports import csv_cell, decisions_serialize
from annotation.services.studies import study_codes, study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from tasks.models import ScreeningQuestion, Setup
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import make_study, serving_path  # noqa: F401 - a fixture
from tests.factories import CorpusFactory, ScreeningQuestionFactory, TaskInstanceFactory, component
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db

PROLIFIC_PID = "5f3e1c2b9a8d7e6f5a4b3c2d"


@pytest.fixture
def client() -> APIClient:
    return APIClient()


# --- codes ----------------------------------------------------------------------------------------------------


def test_screened_out_code_is_random_and_independent_of_the_completion_code():
    studies = [make_study(slug=f"codes-{n}", completion_code="") for n in range(5)]
    completion = {s.completion_code for s in studies}
    screened = {s.screened_out_code for s in studies}
    assert len(completion) == len(screened) == 5  # fresh draws, not one derived from the other
    for study in studies:
        assert len(study.screened_out_code) == 8 and study.screened_out_code != study.completion_code
        assert study.completion_code not in study.screened_out_code
    given = make_study(slug="codes-given")  # make_study gives completion code DONE123
    assert given.completion_code == "DONE123"
    assert "DONE123" not in given.screened_out_code and not given.screened_out_code.startswith("SCREENED")


@pytest.mark.parametrize("screened", ["DONE123", "done123", "SCREENED-DONE123"])
def test_a_screened_out_code_derived_from_the_completion_code_is_refused(screened):
    with pytest.raises(ApplicationError, match="must differ"):
        study_codes(completion_code="DONE123", screened_out_code=screened)
    with pytest.raises(ApplicationError):
        make_study(slug="derived", screened_out_code=screened)
    assert not Study.objects.filter(slug="derived").exists()


def test_the_database_refuses_equal_codes_and_the_model_defaults_are_random():
    study = Study.objects.create(slug="orm-made")
    assert study.completion_code and study.screened_out_code and study.completion_code != study.screened_out_code
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=study.pk).update(screened_out_code=study.completion_code)


def test_the_data_migration_gives_derived_or_empty_screened_out_codes_a_fresh_random_one():
    migration = importlib.import_module("annotation.migrations.0005_codes_and_endings")
    derived = Study.objects.create(slug="old-derived", completion_code="ABC123", screened_out_code="x")
    Study.objects.filter(pk=derived.pk).update(screened_out_code="SCREENED-ABC123")
    empty = Study.objects.create(slug="old-empty", completion_code="XYZ789", screened_out_code="x")
    Study.objects.filter(pk=empty.pk).update(screened_out_code="")
    custom = Study.objects.create(slug="old-custom", completion_code="KEEP1", screened_out_code="OWN-CODE")
    migration.independent_codes(apps, None)
    for study in (derived, empty):
        study.refresh_from_db()
        assert len(study.screened_out_code) == 8 and "SCREENED" not in study.screened_out_code
        assert study.completion_code not in study.screened_out_code
    assert derived.completion_code == "ABC123"
    custom.refresh_from_db()
    assert (custom.completion_code, custom.screened_out_code) == ("KEEP1", "OWN-CODE")


# --- endings per platform --------------------------------------------------------------------------------------


def _finish(client, study, pid, platform):
    p = P(client, study.slug, pid, platform=platform)
    p.start()
    p.consent()
    p.play()
    return p, p.next().json()


@pytest.mark.usefixtures("serving_path")
def test_completion_redirect_per_platform(client):
    study = make_study(slug="redirects", n_instances=8, per_batch=2)
    _, prolific = _finish(client, study, PROLIFIC_PID, "prolific")
    assert prolific["completion_code"] == "DONE123"
    assert prolific["redirect_url"] == "https://app.prolific.com/submissions/complete?cc=DONE123"
    # MTurk: the code, and no redirect to Prolific (the page posts to MTurk's external submit form instead)
    _, mturk = _finish(client, study, "A1B2C3D4E5F6G7", "mturk")
    assert mturk["state"] == "completed" and mturk["completion_code"] == "DONE123" and mturk["redirect_url"] is None
    p, anonymous = _finish(client, study, "", "anonymous")
    assert anonymous["completion_code"] == "DONE123" and "cc=DONE123" in anonymous["redirect_url"]
    session = client.get(f"/api/v1/sessions/{p.token}/").json()
    assert session["state"] == "completed" and session["completion_code"] == "DONE123"


def test_screened_out_ending_gives_the_screened_out_code_never_the_completion_code(client):
    eligibility = [{"name": "native", "text": "Native?", "choices": ["yes", "no"], "accept": ["yes"]}]
    study = make_study(slug="screen-end", eligibility=eligibility)
    for platform, pid in (("prolific", PROLIFIC_PID), ("mturk", "WORKER1")):
        p = P(client, study.slug, pid, platform=platform)
        p.start()
        p.consent()
        body = client.post(f"/api/v1/sessions/{p.token}/eligibility/", {"answers": {"native": "no"}},
                           format="json").json()
        assert body["state"] == "screened_out"
        assert body["completion_code"] == study.screened_out_code != study.completion_code
        assert "DONE123" not in json.dumps(body)
        assert (body["redirect_url"] is None) == (platform == "mturk")


def test_declining_consent_is_recorded_and_a_reload_shows_the_declined_ending(client):
    study = make_study(slug="decline")
    p = P(client, study.slug, PROLIFIC_PID)
    p.start()
    r = client.post(f"/api/v1/sessions/{p.token}/consent/", {"agree": False}, format="json")
    assert r.status_code == 200 and r.json()["state"] == "declined"
    assert r.json()["completion_code"] is None and r.json()["redirect_url"] is None
    batch = Batch.objects.get(token=p.token)
    assert batch.state == Batch.State.DECLINED and batch.finished_at and batch.consented_at is None
    assert not Reservation.objects.filter(batch=batch).exists()
    # a reload (the stored token) and a repeated click: still declined
    assert client.get(f"/api/v1/sessions/{p.token}/").json()["state"] == "declined"
    assert client.post(f"/api/v1/sessions/{p.token}/consent/", {"agree": False}, format="json").status_code == 200
    # coming back through the study link: the declined session again, not a new batch at the consent page
    again = client.post(f"/api/v1/studies/{study.slug}/sessions/", {"participant": PROLIFIC_PID,
                                                                   "platform": "prolific"}, format="json")
    assert again.status_code == 200 and again.json()["state"] == "declined"
    assert Batch.objects.filter(participant__external_id=PROLIFIC_PID).count() == 1
    # agreeing afterwards is a wrong state, and nothing is served
    assert_api_error(client.post(f"/api/v1/sessions/{p.token}/consent/", {"agree": True}, format="json"),
               status=409, code="wrong_state")
    assert_api_error(p.next(), status=409, code="wrong_state")
    rec = participant_recommendations(study=study)[0]
    assert rec["recommendation"] == "return" and rec["evidence"] == ["declined consent"]


def test_declining_after_consent_is_a_wrong_state(client):
    study = make_study(slug="decline-late")
    p = P(client, study.slug, PROLIFIC_PID)
    p.start()
    p.consent()
    assert_api_error(client.post(f"/api/v1/sessions/{p.token}/consent/", {"agree": False}, format="json"),
               status=409, code="wrong_state")


# --- recommendations and decision CSVs ------------------------------------------------------------------------------


def test_a_participant_with_no_answers_is_never_approved(client):
    study = make_study(slug="no-answers")
    idle = P(client, study.slug, "idle-1")
    idle.start()
    idle.consent()
    idle.next()  # items reserved, none answered
    arrived = P(client, study.slug, "arrived-1")
    arrived.start()
    done = P(client, study.slug, "done-1")
    done.start()
    done.consent()
    done.play()
    recs = {r["participant"]: r for r in participant_recommendations(study=study)}
    assert recs["idle-1"]["recommendation"] == "return" and recs["idle-1"]["evidence"] == ["no answers"]
    assert recs["arrived-1"]["recommendation"] == "return"
    assert recs["done-1"]["recommendation"] == "approve"
    assert all(r["recommendation"] != "approve" for r in recs.values() if r["answers"] == 0)


@pytest.mark.parametrize(("value", "safe"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("plain", "plain"), (None, ""), ("a=b", "a=b"),
])
def test_csv_cells_are_neutralized_against_formula_injection(value, safe):
    assert csv_cell(value) == safe


def _decision_study(client):
    study = make_study(slug="decisions", n_instances=8, per_batch=2, screening=1)
    for pid, platform in (("=cmd|' /C calc'!A0", "prolific"), ("good-1", "prolific")):
        p = P(client, study.slug, pid, platform=platform)
        p.start()
        p.consent()
        p.play()
    P(client, study.slug, "no-show", platform="prolific").start()
    worker = client.post(f"/api/v1/studies/{study.slug}/sessions/", {
        "participant": "WORKER9", "platform": "mturk", "assignment": "ASSIGN9", "hit": "HIT9"}, format="json")
    token = worker.json()["token"]
    client.post(f"/api/v1/sessions/{token}/consent/", {"agree": True}, format="json")
    mturk = P(client, study.slug, "WORKER9", platform="mturk")
    mturk.token = token
    mturk.play(fail_screening=True)
    failer = P(client, study.slug, "-bad", platform="prolific")
    failer.start()
    failer.consent()
    failer.play(fail_screening=True)
    # a second failed check for "-bad" (one failed check alone is no ground for rejection)
    second = Response.objects.filter(participant__external_id="-bad", is_screening=True).first()
    Response.objects.create(study=study, participant=second.participant, screening_question=second.screening_question,
                            batch_number=2, answer=second.answer, is_screening=True, is_correct=False,
                            answered_at=second.answered_at)
    return study


def test_prolific_decisions_csv_has_one_row_per_participant_with_reason_and_safe_cells(client):
    study = _decision_study(client)
    rows = list(csv.DictReader(io.StringIO(decisions_serialize(study=study, fmt="prolific"))))
    by_id = {row["participant_id"]: row for row in rows}
    assert list(rows[0]) == ["participant_id", "submission_id", "decision", "reason", "rejection_category"]
    assert by_id["good-1"]["decision"] == "approve" and by_id["good-1"]["reason"] == "completed"
    assert by_id["'=cmd|' /C calc'!A0"]["decision"] == "approve"  # neutralized, still identifiable
    assert by_id["no-show"]["decision"] == "return" and by_id["no-show"]["reason"] == "no answers"
    assert by_id["'-bad"]["decision"] == "reject" and by_id["'-bad"]["rejection_category"] == "FAILED_CHECK"
    assert by_id["'-bad"]["reason"].startswith("You failed 2 of ") and len(by_id["'-bad"]["reason"]) >= 100
    assert by_id["WORKER9"]["decision"] == "approve"  # one failed check: data excluded, payment approved


def test_mturk_decisions_csv_has_one_row_per_assignment(client):
    study = _decision_study(client)
    rows = list(csv.DictReader(io.StringIO(decisions_serialize(study=study, fmt="mturk"))))
    assert [(r["AssignmentId"], r["WorkerId"], r["HITId"], r["Approve"], r["Reject"]) for r in rows] == [
        ("ASSIGN9", "WORKER9", "HIT9", "x", "")]


def test_decisions_through_the_cli_the_api_and_the_admin(client, tmp_path, admin_client, admin_user):
    study = _decision_study(client)
    out = io.StringIO()
    target = tmp_path / "decisions.csv"
    call_command("export_decisions", "--study", study.slug, "--out", str(target), stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] is True and summary["rows"] == 5
    assert (summary["approve"], summary["reject"], summary["return"]) == (3, 1, 1)
    assert target.read_text(encoding="utf-8") == decisions_serialize(study=study, fmt="prolific")
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("export_decisions", "--study", "nope", "--out", str(target), stdout=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1])["ok"] is False
    # the API (researchers only)
    api = APIClient()
    assert api.get(f"/api/v1/studies/{study.slug}/decisions/").status_code in (401, 403)
    api.force_authenticate(admin_user)
    r = api.get(f"/api/v1/studies/{study.slug}/decisions/?format=mturk")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    assert r.content.decode() == decisions_serialize(study=study, fmt="mturk")
    assert_api_error(api.get(f"/api/v1/studies/{study.slug}/decisions/?format=xls"), status=400, code="invalid")
    assert_api_error(api.get("/api/v1/studies/nope/decisions/"), status=404, code="not_found")
    # the admin: an action on the study, and links on its page
    r = admin_client.post("/admin/annotation/study/", {"action": "export_decisions_prolific",
                                                       "_selected_action": [study.pk]})
    assert r.status_code == 200 and r.content.decode() == decisions_serialize(study=study, fmt="prolific")
    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert f"/api/v1/studies/{study.slug}/decisions/?format=prolific" in page


# --- screening required, per component and setup ------------------------------------------------------------------


def _instances(component_name: str, setup: str = Setup.QUADRUPLE, n: int = 4):
    corpus = CorpusFactory(component=component(component_name))
    return TaskInstanceFactory.create_batch(n, corpus=corpus, setup=setup)


def test_a_study_asking_for_screening_questions_is_refused_without_any():
    instances = _instances("formality")
    with pytest.raises(ApplicationError) as exc:
        study_create(
            slug="no-screening", item_kind="quadruple", corpus=[instances[0].corpus.name],
            settings=study_settings_build(screening_per_batch=2),
        )
    assert "0 active screening question(s) fit component(s) formality" in exc.value.message
    assert "loaddata screening_questions" in exc.value.message
    assert not Study.objects.exists()
    # questions of another component, or inactive ones, do not count
    ScreeningQuestionFactory.create_batch(3, component=component("simplicity"))
    ScreeningQuestionFactory.create_batch(3, component=component("formality"), active=False)
    with pytest.raises(ApplicationError, match="0 active screening"):
        study_create(
            slug="no-screening", item_kind="quadruple", corpus=[instances[0].corpus.name],
            settings=study_settings_build(screening_per_batch=2),
        )
    # none asked: fine
    assert study_create(
        slug="unscreened", item_kind="quadruple", corpus=[instances[0].corpus.name],
        settings=study_settings_build(screening_per_batch=0),
    ).screening_per_batch == 0


def test_the_simplicity_triple_draws_only_obvious_simplicity_questions(client):
    call_command("loaddata", "screening_questions", stdout=io.StringIO())
    ScreeningQuestion.objects.filter(name__startswith="stylecrowd-").update(active=False)
    instances = _instances("simplicity", Setup.TRIPLE, n=6)
    with pytest.raises(ApplicationError, match="in the triple setup"):  # STEL's two: quadruples only
        study_create(
            slug="simple-triple", item_kind="triple", corpus=[instances[0].corpus.name],
            settings=study_settings_build(screening_per_batch=2),
        )
    ScreeningQuestion.objects.filter(name__startswith="stylecrowd-").update(active=True)
    study = study_create(
        slug="simple-triple", item_kind="triple", corpus=[instances[0].corpus.name], eligibility_questions=[],
        settings=study_settings_build(screening_per_batch=2, items_per_batch=2),
    )
    names = set()
    for n in range(3):
        p = P(client, study.slug, f"triple-{n}")
        p.start()
        p.consent()
        p.play()
        names |= set(Reservation.objects.filter(batch__token=p.token, screening_question__isnull=False)
                     .values_list("screening_question__name", flat=True))
    assert names and all(name.startswith("stylecrowd-simplicity-") for name in names)


def test_the_admin_refuses_screening_without_questions_and_derived_codes(admin_client):
    study = make_study(slug="admin-checks", screening=0)
    ScreeningQuestion.objects.all().delete()
    url = f"/admin/annotation/study/{study.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items() if not isinstance(v, bool) or v}
    for key in ("selection", "eligibility_questions", "questions"):
        data[key] = json.dumps(getattr(study, key))
    r = admin_client.post(url, {**data, "screening_per_batch": 2, "screened_out_code": "SCREENED-DONE123"})
    assert r.status_code == 200  # the form again, with the errors
    errors = r.context["adminform"].form.errors
    assert "loaddata screening_questions" in errors["screening_per_batch"][0]
    assert "must differ" in errors["screened_out_code"][0]
    study.refresh_from_db()
    assert study.screening_per_batch == 0 and study.screened_out_code != "SCREENED-DONE123"
    r = admin_client.post(url, {**data, "screening_per_batch": 0, "title": "renamed"})
    assert r.status_code == 302, r.context["adminform"].form.errors if r.context else r
    assert Study.objects.get(pk=study.pk).title == "renamed"


# --- task descriptions per component and setup ---------------------------------------------------------------------


@pytest.mark.parametrize("setup", [Setup.QUADRUPLE, Setup.TRIPLE, Setup.STYLE_OR_CONTENT])
@pytest.mark.parametrize("name", ["formality", "simplicity", "contraction", "nbr_substitution"])
def test_the_served_task_description_fits_the_component_and_the_setup(client, name, setup):
    instances = _instances(name, setup)
    study = study_create(
        slug=f"desc-{name}-{setup}", item_kind=setup, corpus=[instances[0].corpus.name],
        settings=study_settings_build(screening_per_batch=0),
    )
    served = P(client, study.slug, "reader").start()["study"]["task_description"]
    text = COMPONENT_TEXTS[name]
    assert text.contrast in served and text.anchors[0] in served and text.sentences[0] in served
    for other, other_text in COMPONENT_TEXTS.items():
        if other != name:  # never another component's example (no simplicity study explained with formality)
            assert other_text.anchors[0] not in served and other_text.contrast not in served
    labels = component(name)
    if setup == Setup.QUADRUPLE:
        assert "A2:" in served and text.anchors[1] in served and "Answer: S2-S1" in served and "S1-S2" in served
        assert f"S2 is {labels.label_1} like A1" in served
    else:
        assert "A2:" not in served and "Answer: S2" in served and "Answer: S2-S1" not in served
    if setup == Setup.STYLE_OR_CONTENT:
        assert "not the one that means the same" in served and f"S1: {text.anchors[1]}" in served
    if setup == Setup.TRIPLE:
        assert "closest in style to A1" in served


def test_a_mixed_study_explains_every_component_and_a_given_description_wins(client):
    a, b = _instances("contraction"), _instances("simplicity")
    study = study_create(
        slug="mixed", item_kind="quadruple", corpus=[a[0].corpus.name, b[0].corpus.name],
        settings=study_settings_build(screening_per_batch=0),
    )
    assert "Example (contraction)" in study.task_description and "Example (simplicity)" in study.task_description
    own = study_create(
        slug="own", item_kind="quadruple", corpus=[a[0].corpus.name],
        settings=study_settings_build(screening_per_batch=0, task_description="My own words."),
    )
    assert P(client, own.slug, "x").start()["study"]["task_description"] == "My own words."


# --- the API's door to study creation ------------------------------------------------------------------------------


def test_the_api_creates_studies_with_independent_codes_and_refuses_missing_screening(admin_user):
    instances = _instances("contraction")
    api = APIClient()
    body = {"slug": "api-made", "setup": "quadruple", "corpora": [instances[0].corpus.name], "screening_per_batch": 2,
            "completion_code": "PAYME1"}
    assert api.post("/api/v1/studies/", body, format="json").status_code in (401, 403)
    api.force_authenticate(admin_user)
    error = assert_api_error(api.post("/api/v1/studies/", body, format="json"), status=400, code="invalid")
    assert "0 active screening question(s) fit component(s) contraction" in error["message"]
    assert not Study.objects.exists()
    assert_api_error(api.post("/api/v1/studies/", {**body, "screening_per_batch": 0,
                                                   "screened_out_code": "SCREENED-PAYME1"}, format="json"),
                     status=400, code="invalid")
    ScreeningQuestionFactory.create_batch(2, component=component("contraction"))
    r = api.post("/api/v1/studies/", body, format="json")
    assert r.status_code == 201, r.content
    created = r.json()
    assert created["completion_code"] == "PAYME1" and len(created["screened_out_code"]) == 8
    assert "PAYME1" not in created["screened_out_code"] and created["url"] == "/s/api-made/"
    assert COMPONENT_TEXTS["contraction"].anchors[0] in created["task_description"]
    assert Study.objects.get(slug="api-made").screening_per_batch == 2


def test_a_closed_study_tells_people_to_return_it_without_thanking_them_for_taking_part():
    study = make_study(slug="closed-now")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    page = DjangoClient().get(f"/s/{study.slug}/?PROLIFIC_PID={PROLIFIC_PID}&STUDY_ID=S&SESSION_ID=X")
    text = page.content.decode()
    assert page.status_code == 410 and "return your submission" in text and "return the HIT" in text
    assert "taking part!" not in text and "DONE123" not in text


def test_create_study_prints_both_codes(tmp_path):
    instances = _instances("formality")
    out = io.StringIO()
    call_command("create_study", "--slug", "cli-codes", "--setup", "quadruple", "--corpus", instances[0].corpus.name,
                 "--screening-per-batch", "0", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    study = Study.objects.get(slug="cli-codes")
    assert (summary["completion_code"], summary["screened_out_code"]) == (study.completion_code,
                                                                          study.screened_out_code)
    assert summary["completion_code"] != summary["screened_out_code"]


def test_the_admin_add_form_offers_two_independent_random_codes(admin_client):
    form = admin_client.get("/admin/annotation/study/create/quadruple/").context["form"]
    completion, screened = form["completion_code"].value(), form["screened_out_code"].value()
    assert len(completion) == len(screened) == 8 and completion != screened
    again = admin_client.get("/admin/annotation/study/create/quadruple/").context["form"]
    assert again["screened_out_code"].value() != screened  # drawn afresh, not derived
