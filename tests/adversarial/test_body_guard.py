"""One body guard on every door (core/json_guard.py): deep nesting, NUL characters and numbers no field stores are
400s naming the field on the researchers' API, form errors in the admin and errors naming the file on the command
line — never a 500, never stored. The participant endpoints' own cases are in tests/adversarial/test_limits.py."""
from __future__ import annotations

import base64
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Study
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from core.json_guard import MAX_JSON_DEPTH
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db
DEEP = ("[" * 100_000).encode()  # the attack run's body: 100,000 nested arrays, never closed
NUL = "before\u0000after"
DECIDE = "/admin/annotation/rewritereview/queue/decide/"
QUESTION = {"name": "native", "text": "Is English your first language?", "choices": ["yes", "no"], "accept": ["yes"]}


@pytest.fixture
def rewrite() -> Study:
    return study_create(slug="guarded-rw", item_kind="rewrite", eligibility_questions=[],
                        items=[{"id": f"r{i}", "source": "short text", "target_style": "formal"} for i in range(3)],
                        settings=study_settings_build(annotators_per_item=2, items_per_batch=3))


def _study_body(**extra: Any) -> dict[str, Any]:
    return {"slug": "guarded", "kind": "rewrite", "items": [{"id": "r1", "source": "short text",
                                                              "target_style": "formal"}], **extra}


# --- deep nesting: a 400, on every door that reads JSON ----------------------------------------------------------


@pytest.mark.parametrize("body", [DEEP, b'{"slug": "x", "items": ' + b"[" * 40 + b"]" * 40 + b"}"])
def test_a_deep_body_to_create_a_study_is_a_400(api: APIClient, body: bytes) -> None:
    response = api.post("/api/v1/studies/", body, content_type="application/json")
    error = assert_api_error(response, code="parse_error", status=400)
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error["message"]
    assert not Study.objects.exists()


def test_a_deep_body_to_a_review_decision_is_a_400(api: APIClient, rewrite: Study) -> None:
    response = api.post(f"/api/v1/studies/{rewrite.slug}/reviews/", DEEP, content_type="application/json")
    assert_api_error(response, code="parse_error", status=400)


def test_a_deep_body_to_the_admin_review_queue_is_a_400(admin_client: Client, rewrite: Study) -> None:
    response = admin_client.post(DECIDE, DEEP, content_type="application/json")
    error = assert_api_error(response, code="invalid", status=400)
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error["message"]
    response = admin_client.post(DECIDE, json.dumps({"response": 1, "decision": "reject", "reason_text": NUL}),
                                 content_type="application/json")
    error = assert_api_error(response, code="invalid", status=400)
    assert error["details"] == {"field": "reason_text"} and "NUL" in error["message"]


def test_a_deep_form_body_and_a_nul_in_a_form_field_are_400s(api: APIClient) -> None:
    response = api.post("/api/v1/components/", "name=a%00b&label_1=x&label_2=y",
                        content_type="application/x-www-form-urlencoded")
    error = assert_api_error(response, code="invalid", status=400)
    assert error["details"] == {"name": ["text must not hold a NUL character (\\u0000)."]}


# --- NUL characters and numbers no field stores: a 400 naming the field ------------------------------------------


def test_an_eligibility_question_with_a_nul_is_refused_by_the_api(api: APIClient) -> None:
    questions = [{**QUESTION, "text": NUL}]
    response = api.post("/api/v1/studies/", _study_body(eligibility_questions=questions), format="json")
    error = assert_api_error(response, code="invalid", status=400)
    assert error["details"] == {"eligibility_questions[0].text": ["text must not hold a NUL character (\\u0000)."]}
    assert not Study.objects.exists()


@pytest.mark.parametrize(("raw", "field"), [
    (b'{"slug": "guarded", "kind": "rewrite", "seed": 1e400}', "seed"),
    (b'{"slug": "guarded", "kind": "rewrite", "seed": 1' + b"0" * 400 + b"}", "seed"),
    (b'{"slug": "guarded", "kind": "rewrite", "items": [{"id": "r1", "source": "\\u0000"}]}', "items[0].source"),
    (b'{"slug": "guarded", "kind": "rewrite", "items": [{"\\u0000": "x"}]}', "items[0]"),
])
def test_numbers_no_field_stores_and_nul_anywhere_are_refused_naming_the_field(api: APIClient, raw: bytes,
                                                                                 field: str) -> None:
    error = assert_api_error(api.post("/api/v1/studies/", raw, content_type="application/json"),
                             code="invalid", status=400)
    assert list(error["details"]) == [field]
    assert not Study.objects.exists()


def test_the_service_refuses_a_nul_in_what_participants_see_whatever_the_door() -> None:
    with pytest.raises(ApplicationError) as refused:
        study_create(slug="svc", item_kind="rewrite", eligibility_questions=[{**QUESTION, "text": NUL}],
                     items=[{"id": "r1", "source": "short text", "target_style": "formal"}])
    assert refused.value.field == "eligibility_questions" and "eligibility_questions[0].text" in refused.value.message
    assert not Study.objects.exists()


def test_an_eligibility_question_with_a_nul_is_a_form_error_in_the_admin(admin_client: Client) -> None:
    page = admin_client.post("/admin/annotation/study/create/", {
        "slug": "guarded-form", "kind": "rewrite", "sources": "one short source text\nanother short source text",
        "target_style": "formal", "instance_status": "any",
        "eligibility_questions": json.dumps([{**QUESTION, "text": NUL}]),
    })
    assert page.status_code == 200
    errors = page.context["form"].errors
    assert "eligibility_questions" in errors, errors
    assert "NUL" in str(errors["eligibility_questions"])
    assert not Study.objects.exists()


def test_a_raw_nul_in_an_admin_text_field_is_a_form_error_naming_it(admin_client: Client) -> None:
    page = admin_client.post("/admin/tasks/stylecomponent/add/", {"name": "a\x00b", "label_1": "x", "label_2": "y"})
    assert page.status_code == 200
    assert "name" in page.context["adminform"].form.errors


def test_a_nul_or_deep_json_in_a_study_s_eligibility_box_is_a_form_error(admin_client: Client, rewrite: Study) -> None:
    """The study's change page edits its eligibility questions as JSON: what participants are shown is held to the
    rule there too (PostgreSQL's jsonb would refuse the NUL with a 500; a deep box would exhaust the recursion)."""
    url = f"/admin/annotation/study/{rewrite.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    for value, problem in ((json.dumps([{**QUESTION, "text": NUL}]), "NUL"), ("[" * 5000, "deeper than")):
        page = admin_client.post(url, {**data, "eligibility_questions": value})
        assert page.status_code == 200
        errors = page.context["adminform"].form.errors
        assert problem in str(errors.get("eligibility_questions")), errors
    rewrite.refresh_from_db()
    assert rewrite.eligibility_questions == []


def test_an_eligibility_file_with_a_nul_is_refused_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "eligibility.json"
    path.write_text(json.dumps([{**QUESTION, "text": NUL}]))
    sources = tmp_path / "sources.txt"
    sources.write_text("one short source text\nanother short source text\n")
    with pytest.raises(CommandError, match=r"eligibility\.json: \[0\]\.text: text must not hold a NUL"):
        call_command("create_study", "--slug", "cli", "--kind", "rewrite", "--sources", str(sources),
                     "--target-style", "formal", "--eligibility", str(path), stdout=StringIO(), stderr=StringIO())
    assert not Study.objects.exists()


# --- credentials with a NUL: refused as wrong ones, nothing recorded ----------------------------------------------


def test_a_nul_in_the_admin_login_is_refused_and_records_nothing(client: Client) -> None:
    User.objects.create_user("staff", password="pw", is_staff=True)
    for username, password in (("sta\x00ff", "pw"), ("staff", "p\x00w")):
        page = client.post("/admin/login/", {"username": username, "password": password})
        assert page.status_code == 200 and not page.wsgi_request.user.is_authenticated
        assert page.context["form"].errors
    assert not AccessAttempt.objects.exists() and not AccessFailureLog.objects.exists()


def test_a_nul_in_basic_credentials_is_a_403_and_records_nothing(anonymous_api: APIClient) -> None:
    header = "Basic " + base64.b64encode(b"a\x00b:pw").decode()
    response = anonymous_api.get("/api/v1/exports/", HTTP_AUTHORIZATION=header)
    assert_api_error(response, code="authentication_failed", status=403)
    assert not AccessAttempt.objects.exists() and not AccessFailureLog.objects.exists()


def test_a_text_file_with_a_nul_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    """The sources of a rewrite study (shown to writers) and every corpus file are read by one reader
    (tasks/services/parsers.py read_text): a NUL in them is refused naming the file and the line."""
    sources = tmp_path / "sources.txt"
    sources.write_text("one short source text\nanother short\u0000 source text\n")
    with pytest.raises(CommandError, match=r"sources\.txt, line 2: holds a NUL character"):
        call_command("create_study", "--slug", "cli", "--kind", "rewrite", "--sources", str(sources),
                     "--target-style", "formal", "--eligibility", "none", stdout=StringIO(), stderr=StringIO())
    assert not Study.objects.exists()
    informal, formal = tmp_path / "informal.txt", tmp_path / "formal.txt"
    informal.write_text("hey there\nwhat's up\n")
    formal.write_text("Hello.\nHow are\u0000 you?\n")
    with pytest.raises(CommandError, match=r"formal\.txt, line 2: holds a NUL character"):
        call_command("import_corpus", str(informal), str(formal), "--name", "nul", "--component", "formality",
                     "--format", "aligned", "--licence", "CC-BY-4.0", "--attribution", "test", stdout=StringIO(),
                     stderr=StringIO())
