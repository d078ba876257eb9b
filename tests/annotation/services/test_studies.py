"""Every kind of study, the sampling plan and practice items through the three doors — the admin's "Create a study"
(Django test client), `POST /api/v1/studies/` and `create_study` (call_command) — into the same study, with the same
validation errors from the one service (annotation.services.study_build)."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from annotation.models import Participant, RewriteReview, Study
from tasks.models import ScreeningQuestion
from tests.factories import CorpusFactory, TaskInstanceFactory, component

pytestmark = pytest.mark.django_db
CREATE = "/admin/annotation/study/create/"

LIKERT_ITEMS = [{"id": f"l{n}", "source": f"gonna be late {n}", "rewrite": f"I will be late {n}.", "system": "s"}
                for n in range(3)]
OUTPUTS = [{"id": "1", "source": "u coming?", "sys_a": "Are you coming?", "sys_b": "Will you come?"},
           {"id": "2", "source": "thx a lot", "sys_a": "Thank you very much.", "sys_b": "Many thanks."}]
PRACTICE = [{"anchor_1": "hey whats up", "anchor_2": "Hello, how are you?", "sentence_1": "Thank you.",
             "sentence_2": "thx", "correct_answer": "S2-S1", "explanation": "S2 is casual, like A1."}]


def command(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("create_study", *args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def command_error(*args: str) -> str:
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("create_study", *args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])["error"]["message"]


def admin_form(**extra: Any) -> dict[str, Any]:
    return {"kind": "ordering", "instance_status": "candidate", "seed": 0, **extra}


def items_of(slug: str) -> list[tuple[str, dict[str, Any]]]:
    study = Study.objects.get(slug=slug)
    return [(i.external_id, i.payload) for i in study.items.order_by("position")]


@pytest.fixture
def two_components() -> None:
    for name in ("formality", "simplicity"):
        corpus = CorpusFactory(name=f"corpus-{name}", component=component(name))
        for i in range(30):
            TaskInstanceFactory(corpus=corpus, family=f"{name}-{i}")


def test_likert_study_with_a_preset_is_the_same_through_the_three_doors(api, admin_client, tmp_path: Path) -> None:
    items_file = tmp_path / "items.jsonl"
    items_file.write_text("\n".join(json.dumps(row) for row in LIKERT_ITEMS), encoding="utf-8")
    command("--slug", "lk-cli", "--kind", "likert", "--items", str(items_file), "--preset", "pauli")
    response = api.post("/api/v1/studies/", {"slug": "lk-api", "kind": "likert", "items": LIKERT_ITEMS,
                                             "preset": "pauli"}, format="json")
    assert response.status_code == 201, response.content
    page = admin_client.post(CREATE, admin_form(slug="lk-admin", kind="likert", preset="pauli", items_file=(
        SimpleUploadedFile("items.jsonl", items_file.read_bytes()))))
    assert page.status_code == 302, page.context["form"].errors
    studies = [Study.objects.get(slug=s) for s in ("lk-cli", "lk-api", "lk-admin")]
    assert {s.item_kind for s in studies} == {"likert"}
    assert {s.annotators_per_item for s in studies} == {3}  # Pauli et al.: 3 raters per pair
    assert {tuple(q["name"] for q in s.questions) for s in studies} == {("style_strength", "content_preservation")}
    assert items_of("lk-cli") == items_of("lk-api") == items_of("lk-admin")
    assert studies[2].status == Study.Status.DRAFT and response.json()["status"] == "draft"


def test_ranking_study_from_system_outputs_through_the_three_doors(api, admin_client, tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("\n".join(json.dumps(row) for row in OUTPUTS), encoding="utf-8")
    command("--slug", "rk-cli", "--kind", "ranking", "--outputs", str(outputs), "--preset", "gyafc")
    response = api.post("/api/v1/studies/", {"slug": "rk-api", "kind": "ranking", "outputs": OUTPUTS,
                                             "preset": "gyafc"}, format="json")
    assert response.status_code == 201, response.content
    page = admin_client.post(CREATE, admin_form(slug="rk-admin", kind="ranking", preset="gyafc", outputs_file=(
        SimpleUploadedFile("outputs.jsonl", outputs.read_bytes()))))
    assert page.status_code == 302, page.context["form"].errors
    assert items_of("rk-cli") == items_of("rk-api") == items_of("rk-admin")
    first = items_of("rk-api")[0][1]
    assert [o["system"] for o in first["outputs"]] == ["sys_a", "sys_b"]
    assert Study.objects.get(slug="rk-admin").task_description.startswith("In each question you see an informal")


def _rewrite_study_with_accepted_rewrites(api) -> Study:
    sources = [{"id": f"s{n}", "text": f"gonna tell u a story number {n} real quick"} for n in range(2)]
    response = api.post("/api/v1/studies/", {"slug": "rw", "kind": "rewrite", "annotators_per_item": 2,
                                             "rewrite": {"sources": sources, "target_style": "formal"}},
                        format="json")
    assert response.status_code == 201, response.content
    study = Study.objects.get(slug="rw")
    for n, item in enumerate(study.items.order_by("position")):
        for writer in range(2):
            person = Participant.objects.get_or_create(study=study, platform="prolific",
                                                       external_id=f"W{writer}")[0]
            rewrite = item.responses.create(study=study, participant=person, answered_at=timezone.now(),
                                            answer=f"I shall tell a story {n}{writer}.")
            RewriteReview.objects.create(response=rewrite, status=RewriteReview.Status.ACCEPTED)
    return study


def test_rating_a_rewrite_studys_outputs_through_the_three_doors(api, admin_client) -> None:
    rewrite_study = _rewrite_study_with_accepted_rewrites(api)
    command("--slug", "rate-cli", "--kind", "likert", "--outputs-study", "rw", "--questions", "mind-the-style-gap")
    response = api.post("/api/v1/studies/", {"slug": "rate-api", "kind": "likert", "outputs_study": "rw",
                                             "questions": "mind-the-style-gap"}, format="json")
    assert response.status_code == 201, response.content
    page = admin_client.post(CREATE, admin_form(slug="rate-admin", kind="likert", outputs_study=rewrite_study.slug,
                                                questions="mind-the-style-gap"))
    assert page.status_code == 302, page.context["form"].errors
    assert len(items_of("rate-api")) == 4
    assert items_of("rate-cli") == items_of("rate-api") == items_of("rate-admin")
    ranking = api.post("/api/v1/studies/", {"slug": "rank-api", "kind": "ranking", "outputs_study": "rw"},
                       format="json")
    assert ranking.status_code == 201 and len(items_of("rank-api")) == 2


def test_sampling_plan_and_practice_items_through_the_three_doors(api, admin_client, two_components,
                                                                  tmp_path: Path) -> None:
    practice = tmp_path / "practice.json"
    practice.write_text(json.dumps(PRACTICE), encoding="utf-8")
    summary = command("--slug", "plan-cli", "--setup", "quadruple", "--component", "formality", "--component",
                      "simplicity", "--target-validated", "10", "--validation-rate", "simplicity=0.68",
                      "--validation-rate", "formality=0.88", "--screening-per-batch", "0", "--practice",
                      str(practice), "--seed", "2")
    assert summary["per_component"] == {"formality": 12, "simplicity": 15} and summary["practice_items"] == 1
    response = api.post("/api/v1/studies/", {
        "slug": "plan-api", "setup": "quadruple", "components": ["formality", "simplicity"], "seed": 2,
        "target_validated": 10, "validation_rates": {"simplicity": 0.68, "formality": 0.88},
        "screening_per_batch": 0, "practice": PRACTICE}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["sampling_plan"]["components"]["simplicity"]["sample"] == 15
    assert response.json()["practice_items"] == 1
    page = admin_client.post(CREATE, admin_form(
        slug="plan-admin", setup="quadruple", components=["formality", "simplicity"], seed=2, target_validated=10,
        validation_rates="simplicity=0.68, formality=0.88", screening_per_batch=0,
        practice_file=SimpleUploadedFile("practice.json", practice.read_bytes())))
    assert page.status_code == 302, page.context["form"].errors
    chosen = [sorted(Study.objects.get(slug=s).items.values_list("instance_id", flat=True))
              for s in ("plan-cli", "plan-api", "plan-admin")]
    assert chosen[0] == chosen[1] == chosen[2] and len(chosen[0]) == 27
    assert [Study.objects.get(slug=s).practice_items.count() for s in ("plan-cli", "plan-api", "plan-admin")] == [
        1, 1, 1]


REFUSALS = [
    # (what is wrong, CLI args, API body, admin form fields, field, message)
    ("m > k", ["--annotators-per-item", "3", "--min-correct", "4"], {"annotators_per_item": 3, "min_correct": 4},
     {"annotators_per_item": 3, "min_correct": 4}, "min_correct",
     "Min correct must be between 1 and annotators per item (3), not 4."),
    ("a bound", ["--time-limit", "0"], {"time_limit_minutes": 0}, {"time_limit_minutes": 0}, "time_limit_minutes",
     "Time limit (minutes) must be at least 1, not 0."),
    ("a bound of a float", ["--min-seconds-per-item", "4000"], {"min_seconds_per_item": 4000},
     {"min_seconds_per_item": 4000}, "min_seconds_per_item", "Min seconds per item must be at most 3600, not 4000"),
    ("a missing rate", ["--component", "formality", "--target-validated", "5"],
     {"components": ["formality"], "target_validated": 5}, {"components": ["formality"], "target_validated": 5},
     "validation_rates", "no validation rate for component 'formality'"),
    ("practice for likert", ["--kind", "likert", "--questions", "gyafc"], {"kind": "likert", "questions": "gyafc",
                                                                           "practice": PRACTICE},
     {"kind": "likert", "questions": "gyafc"}, "practice", "Practice: only for ordering studies"),
]


@pytest.mark.parametrize(("what", "cli", "body", "form", "field", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_the_three_doors_refuse_with_the_same_words(api, admin_client, two_components, tmp_path: Path, what: str,
                                                    cli: list[str], body: dict, form: dict, field: str,
                                                    message: str) -> None:
    base_cli = ["--slug", "bad", "--screening-per-batch", "0"] + ([] if "--kind" in cli else ["--setup", "quadruple"])
    if what == "practice for likert":
        practice = tmp_path / "p.json"
        practice.write_text(json.dumps(PRACTICE), encoding="utf-8")
        cli = [*cli, "--practice", str(practice)]
        form = {**form, "practice_file": SimpleUploadedFile("p.json", practice.read_bytes())}
    assert message in command_error(*base_cli, *cli)
    response = api.post("/api/v1/studies/", {"slug": "bad", "setup": "quadruple", "screening_per_batch": 0, **body},
                        format="json")
    assert response.status_code == 400 and message in json.dumps(response.json()), response.content
    page = admin_client.post(CREATE, admin_form(slug="bad", setup="quadruple", screening_per_batch=0, **form))
    errors = page.context["form"].errors
    shown = {"validation_rates": "validation_rates", "practice": "practice_file"}.get(field, field)
    assert page.status_code == 200 and any(message in e for e in errors[shown]), errors
    assert not Study.objects.filter(slug="bad").exists()


def test_the_admin_loads_steels_screening_questions_for_the_first_study(admin_client, two_components) -> None:
    refused = admin_client.post(CREATE, admin_form(slug="first", setup="quadruple", components=["formality"]))
    error = refused.context["form"].errors["screening_per_batch"][0]
    assert "Load STEL's screening questions" in error and not ScreeningQuestion.objects.exists()
    page = admin_client.post(CREATE, admin_form(slug="first", setup="quadruple", components=["formality"],
                                                load_stel_screening="on"))
    assert page.status_code == 302, page.context["form"].errors
    study = Study.objects.get(slug="first")
    assert study.screening_per_batch == 2 and ScreeningQuestion.objects.count() == 16 + 6 * 4  # and the other languages
    # The screening questions page's button: the same service, idempotent, and private questions are kept.
    ScreeningQuestion.objects.filter(name="stel-formality-1").update(active=False)
    changelist = admin_client.get(reverse("admin:tasks_screeningquestion_changelist"))
    assert b"Load STEL&#x27;s screening questions" in changelist.content or b"Load STEL's screening" in (
        changelist.content)
    loaded = admin_client.post(reverse("admin:tasks_screeningquestion_load_published"), follow=True)
    assert b"Loaded 0 of STEL" in loaded.content
    assert not ScreeningQuestion.objects.get(name="stel-formality-1").active  # a switched-off question stays off


def test_a_refused_study_leaves_the_loaded_questions_out_too(admin_client, two_components) -> None:
    page = admin_client.post(CREATE, admin_form(slug="first", setup="quadruple", components=["formality"],
                                                load_stel_screening="on", min_correct=9))
    assert page.status_code == 200 and "min_correct" in page.context["form"].errors
    assert not ScreeningQuestion.objects.exists() and not Study.objects.exists()


# --- rewrite review through the API ------------------------------------------------------------------------------


def test_rewrite_review_queue_and_decisions_through_the_api(api) -> None:
    study = _rewrite_study_with_accepted_rewrites(api)
    RewriteReview.objects.all().delete()  # all pending again
    queue = api.get("/api/v1/studies/rw/reviews/")
    assert queue.status_code == 200 and len(queue.json()) == 4
    row = queue.json()[0]
    assert set(row) >= {"response", "source", "rewrite", "participant", "signals"}
    refused = api.post("/api/v1/studies/rw/reviews/", {"response": row["response"], "decision": "reject"},
                       format="json")
    assert refused.status_code == 400 and "needs a reason" in refused.json()["error"]["message"]
    rejected = api.post("/api/v1/studies/rw/reviews/", {"response": row["response"], "decision": "reject",
                                                        "reason": "meaning"}, format="json")
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert not study.responses.get(pk=row["response"]).is_valid  # its slot reopens for another writer
    again = api.post("/api/v1/studies/rw/reviews/", {"response": row["response"], "decision": "accept"},
                     format="json")
    assert again.status_code == 409
    second = queue.json()[1]["response"]
    accepted = api.post("/api/v1/studies/rw/reviews/", {"response": second, "decision": "accept"}, format="json")
    assert accepted.status_code == 200 and accepted.json()["reviewer"] == "admin"
    assert len(api.get("/api/v1/studies/rw/reviews/").json()) == 2
    other, _ = Study.objects.get_or_create(slug="other-rw", defaults={"item_kind": "rewrite"})
    elsewhere = api.post("/api/v1/studies/other-rw/reviews/", {"response": queue.json()[2]["response"],
                                                               "decision": "accept"}, format="json")
    assert elsewhere.status_code == 404  # a rewrite of another study
    assert api.get("/api/v1/studies/rw/reviews/?order=nonsense").status_code == 400
    assert api.get("/api/v1/studies/rw/reviews/?limit=0").status_code == 400


def test_the_review_queues_schema_states_the_values_it_accepts(api) -> None:
    """`show`, `order` and `limit` of GET /api/v1/studies/{slug}/reviews/: every value the OpenAPI schema lists is
    served, and a value outside it (or its bounds) is a 400 naming the parameter."""
    from drf_spectacular.generators import SchemaGenerator

    _rewrite_study_with_accepted_rewrites(api)
    operation = SchemaGenerator().get_schema(request=None, public=True)["paths"][
        "/api/v1/studies/{slug}/reviews/"]["get"]
    schemas = {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "query"}
    assert "flagged" in schemas["show"]["enum"] and "signal:typing_speed" in schemas["order"]["enum"]
    for name in ("show", "order"):
        for value in schemas[name]["enum"]:
            response = api.get("/api/v1/studies/rw/reviews/", {name: value})
            assert response.status_code == 200, (name, value, response.content)
        refused = api.get("/api/v1/studies/rw/reviews/", {name: "signal:nonsense"})
        assert refused.status_code == 400 and name in refused.json()["error"]["details"], refused.content
    bounds = schemas["limit"]
    assert (bounds["minimum"], bounds["maximum"]) == (1, 1000)
    for limit, served in ((1, 200), (1000, 200), (0, 400), (1001, 400)):
        assert api.get("/api/v1/studies/rw/reviews/", {"limit": limit}).status_code == served, limit


def test_the_create_page_shows_every_field_once_in_its_section(admin_client) -> None:
    from annotation.forms import STUDY_KINDS, StudyCreateForm

    form = StudyCreateForm()
    names = [bound.name for _, fields in form.sections() for bound in fields]
    assert sorted(names) == sorted(form.fields) and len(names) == len(set(names))
    chooser = admin_client.get(CREATE).content.decode()
    offered: set[str] = set()
    for kind, title, _ in STUDY_KINDS:
        assert f'href="{CREATE}{kind}/"' in chooser and title in chooser
        form = StudyCreateForm(kind=kind)
        page = admin_client.get(f"{CREATE}{kind}/").content.decode()
        for title, fields in form.sections():
            assert f"<h2>{title}</h2>" in page and fields
        offered |= set(form.fields)
        assert 'enctype="multipart/form-data"' in page and 'name="kind"' not in page
    assert offered == set(StudyCreateForm().fields) - {"kind", "setup"}  # every field is some kind's
    assert admin_client.get(f"{CREATE}nonsense/").status_code == 404


@pytest.mark.parametrize(("kind", "present", "absent"), [
    ("quadruple", {"corpora", "screening_per_batch", "min_correct", "practice_file", "target_validated"},
     {"sources", "items_file", "questions", "preset"}),
    ("likert", {"items_file", "outputs_file", "preset", "questions"},
     {"corpora", "screening_per_batch", "min_correct", "adaptive", "sources", "practice_file"}),
    ("ranking", {"items_file", "outputs_study", "preset"}, {"questions", "corpora", "sources"}),
    ("rewrite", {"sources", "sources_corpus", "target_style", "qualify_min_rate", "items_file"},
     {"corpora", "screening_per_batch", "preset", "outputs_file", "min_correct"}),
])
def test_a_kinds_form_has_its_fields_only_as_the_declarations_say(kind, present, absent) -> None:
    from annotation.forms import StudyCreateForm

    fields = set(StudyCreateForm(kind=kind).fields)
    assert present <= fields and not absent & fields


def test_a_10_mb_line_in_the_admin_form_s_items_file_is_named_by_file_and_line(admin_client) -> None:
    rows = [json.dumps(row) for row in LIKERT_ITEMS]
    rows.insert(1, json.dumps({"id": "huge", "source": "x" * (10 * 1024 * 1024), "rewrite": "y", "system": "s"}))
    page = admin_client.post(CREATE, admin_form(slug="lk-long", kind="likert", preset="pauli", items_file=(
        SimpleUploadedFile("items.jsonl", "\n".join(rows).encode()))))
    assert page.status_code == 200 and not Study.objects.filter(slug="lk-long").exists()
    assert "items.jsonl, line 2: longer than" in page.content.decode()
