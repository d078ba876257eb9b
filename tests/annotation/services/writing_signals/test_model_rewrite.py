"""The similarity to a model's own rewrite, with a model endpoint configured (README, "Writing telemetry and
signals"): the rewriter built on the OpenAI-compatible client asks the fake endpoint of tests/scoring/fake_openai.py,
over real HTTP, once per source with the study's own instructions at temperature 0; a rewrite identical to the
model's is flagged with the model's text as evidence, a different one is not; a refusal, an empty or cut reply and a
time-out leave that source "not measured"; every door (command, job, API, admin) checks the endpoint before anything
is stored or queued; the key is read from the environment and lands in no row, result, output or log."""
from __future__ import annotations

import json
import logging
import socket
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.celery_tasks import writing_signals_task
from annotation.models import Response, RewriteSettings, Study, WritingSignal
from annotation.services.writing_signals.model_rewrite import (
    EndpointRewriter,
    RewriteModel,
    reply_text,
    rewrite_model_options,
    study_model_rewriter,
)
from annotation.services.writing_signals.services import writing_signals_compute
from core.errors import ApplicationError
from core.models import Job
from tests.annotation.services.writing_signals.test_services import OTHER, SOURCE, crowd
from tests.helpers import assert_api_error
from tests.scoring.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db
SECRET = "sk-test-0123456789abcdef-never-stored"
UNLIKE = "Please accept my apologies: my arrival at the gathering shall once more be delayed."
MODEL_TEXTS: dict[str, str] = {}


def crowd_and_model() -> dict[str, list[int]]:
    """The crowd; the model "writes" exactly the paster's first rewrite (a writer who pasted a chatbot's answer)
    for that rewrite's source, and for the other source a sentence unlike every writer's. Items are served in a
    random order, so which source that is is read from the rewrite."""
    ids = crowd()
    first = Response.objects.select_related("study_item").get(pk=ids["paster"][0])
    MODEL_TEXTS.clear()
    MODEL_TEXTS.update({first.study_item.payload["source"]: first.answer,
                        ({SOURCE, OTHER} - {first.study_item.payload["source"]}).pop(): UNLIKE})
    return ids


def rewrite_of(messages: list[dict[str, str]], body: dict[str, Any]) -> str:
    user = next(m["content"] for m in messages if m["role"] == "user")
    source = user.split("Original: ", 1)[1]
    return f'Rewrite: "{MODEL_TEXTS[source]}"'  # a label and quotes, as chat models add them


@pytest.fixture
def fake():
    with FakeOpenAI(rewrite_of, wrap=False, sleep=1.5) as server:
        yield server


def by_source(ids: dict[str, list[int]]) -> dict[str, set[int]]:
    """The crowd's rewrites per source id (items are served in a random order)."""
    out: dict[str, set[int]] = {"s1": set(), "s2": set()}
    for response in Response.objects.filter(pk__in=[i for group in ids.values() for i in group]).select_related(
            "study_item"):
        out[response.study_item.external_id].add(response.pk)
    return out


def model_rows() -> dict[int, WritingSignal]:
    return {row.response_id: row for row in WritingSignal.objects.filter(signal="model_similarity")}


def superuser_api() -> APIClient:
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="x"))
    return api


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_rewrite_identical_to_the_models_is_flagged_and_a_different_one_is_not(fake):
    ids = crowd_and_model()
    study = Study.objects.get(slug="sig")
    endpoint = rewrite_model_options(base_url=fake.base_url + "/", model="fake-model")
    assert endpoint == RewriteModel(base_url=fake.base_url, model="fake-model", api_key_env="OPENAI_API_KEY")
    rewriter = study_model_rewriter(study=study, endpoint=endpoint)
    try:
        summary = writing_signals_compute(study=study, model_rewriter=rewriter, model_name="fake-model")
    finally:
        rewriter.close()
    chats = fake.chat_requests()
    assert len(chats) == 2  # one request per distinct source, not one per rewrite (10)
    body = chats[0]["body"]
    assert body["temperature"] == 0 and body["model"] == "fake-model"
    system = body["messages"][0]["content"]
    assert study.task_description.strip() in system  # the writers' own instructions and examples
    assert "Reply with your rewrite only" in system
    assert {c["body"]["messages"][1]["content"] for c in chats} == {f"Target style: formal\nOriginal: {SOURCE}",
                                                                    f"Target style: formal\nOriginal: {OTHER}"}
    rows = model_rows()
    assert len(rows) == 10 and all(row.score is not None for row in rows.values())
    copied = rows[ids["paster"][0]]
    assert copied.flagged and copied.score == 100 and copied.threshold == 85
    model_text = Response.objects.get(pk=ids["paster"][0]).answer
    assert copied.evidence == f"100% alike with fake-model's own rewrite of this source: \"{model_text}\""
    assert copied.details["model_rewrite"] == model_text  # the label and the quotes taken off
    assert {i for i, row in rows.items() if row.flagged} == {ids["paster"][0]}
    assert not rows[ids["careful"][0]].flagged and rows[ids["careful"][0]].score < 85  # a person's own words
    assert summary["flagged"]["model_similarity"] == 1 and "model_similarity" not in summary["off"]
    assert summary["model_rewrites"] == {"model": "fake-model", "sources": 2, "rewritten": 2, "not_measured": {},
                                         "not_measured_sources": 0}


@pytest.mark.parametrize("fault, reason", [
    ("refusal", "it declined: I can't help with that."),
    ("empty", "its reply was empty"),
    ("cut", "its rewrite was cut at 512 tokens"),
    ("timeout", "the endpoint did not answer: "),
    ("malformed", "its reply could not be read: "),
])
def test_no_model_text_for_a_source_leaves_it_not_measured_with_the_reason(fake, fault, reason):
    ids = crowd_and_model()
    study = Study.objects.get(slug="sig")
    fake.faults.append(fault)  # the first request: the first source's (s1)
    rewriter = EndpointRewriter(endpoint=RewriteModel(base_url=fake.base_url, model="fake-model"),
                                instructions=study.task_description, timeout=0.5, max_retries=0)
    summary = writing_signals_compute(study=study, model_rewriter=rewriter, model_name="fake-model")
    rewriter.close()
    sources = by_source(ids)
    rows = model_rows()
    for response_id in sources["s1"]:
        row = rows[response_id]
        assert row.score is None and not row.flagged
        assert row.evidence.startswith(f"not measured: fake-model gave no rewrite of this source ({reason}")
        assert row.details["not_measured"].startswith(reason)
    assert all(rows[i].score is not None for i in sources["s2"])  # the other source is measured as usual
    assert summary["model_rewrites"]["not_measured_sources"] == 1
    assert summary["model_rewrites"]["not_measured"]["s1"].startswith(reason)
    assert len(fake.chat_requests()) == 2  # nothing asked twice, nothing crashed
    if ids["paster"][0] in sources["s2"]:
        assert rows[ids["paster"][0]].flagged
    # the queue's "all measured signals" show it as not measured, without a score
    staff = Client()
    staff.force_login(User.objects.create_superuser("rev", password="x"))
    page = staff.get("/admin/annotation/rewritereview/queue/?study=sig").content.decode()
    assert "not measured: fake-model gave no rewrite of this source" in page


def test_an_endpoint_that_refuses_every_request_fails_the_run_and_stores_nothing(fake):
    crowd_and_model()
    study = Study.objects.get(slug="sig")
    writing_signals_compute(study=study)
    before = WritingSignal.objects.count()
    fake.faults.append("401")
    rewriter = study_model_rewriter(study=study, endpoint=RewriteModel(base_url=fake.base_url, model="fake-model",
                                                                       api_key_env="NO_SUCH_KEY_VARIABLE"))
    with pytest.raises(ApplicationError) as caught:
        writing_signals_compute(study=study, model_rewriter=rewriter, model_name="fake-model")
    assert caught.value.code == "model_endpoint_auth" and caught.value.details == {"field": "rewrite_model_url"}
    assert "set the environment variable NO_SUCH_KEY_VARIABLE" in caught.value.message
    assert "NO_SUCH_KEY_VARIABLE is not set here" in caught.value.message
    assert WritingSignal.objects.count() == before and not WritingSignal.objects.filter(
        signal="model_similarity").exists()


def test_replies_are_read_as_a_rewrite():
    assert reply_text('  Rewrite: "I shall be late."  ') == "I shall be late."
    assert reply_text("“Would you be free?”") == "Would you be free?"
    assert reply_text('He said "no" and "yes"') == 'He said "no" and "yes"'  # not one enclosing pair
    assert reply_text("   ") == ""


@pytest.mark.parametrize("given, code, field, words", [
    ({"base_url": "not a url", "model": "m"}, "invalid_base_url", "rewrite_model_url", "is not an http(s) URL"),
    ({"base_url": "ftp://host/v1", "model": "m"}, "invalid_base_url", "rewrite_model_url", "is not an http(s) URL"),
    ({"base_url": "http://127.0.0.1:9/v1", "model": ""}, "missing_model", "rewrite_model", "name the model"),
    ({"base_url": "", "model": "m"}, "missing_rewrite_model_url", "rewrite_model_url", "give the URL of the endpoint"),
    ({"base_url": "", "model": "", "api_key_env": "MY_KEY"}, "invalid_option", "api_key_env", "only used with"),
    ({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": SECRET}, "invalid_option", "api_key_env",
     "never the key itself"),
    ({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "UNSET_VARIABLE_X"}, "invalid_option",
     "api_key_env", "no environment variable of that name is set"),
])
def test_bad_endpoint_options_are_refused_naming_the_option(given, code, field, words):
    with pytest.raises(ApplicationError) as caught:
        rewrite_model_options(**given)
    assert caught.value.code == code and caught.value.details == {"field": field}
    assert words in caught.value.message and SECRET not in caught.value.message


def test_an_unreachable_endpoint_is_refused_before_the_run():
    with pytest.raises(ApplicationError) as caught:
        rewrite_model_options(base_url=closed_port_url(), model="m")
    assert caught.value.code == "model_endpoint_unreachable" and caught.value.status == 502
    assert caught.value.message.startswith("Rewrite model URL: cannot reach http://127.0.0.1:")
    assert rewrite_model_options(base_url="", model="") is None  # nothing given: the signal stays off


def test_every_door_refuses_a_bad_or_unreachable_url_before_anything_is_stored(fake):
    crowd_and_model()
    unreachable = closed_port_url()
    api = superuser_api()
    for body, code, status in (({"rewrite_model_url": "not a url", "rewrite_model": "m"}, "invalid_base_url", 400),
                               ({"rewrite_model_url": unreachable, "rewrite_model": "m"},
                                "model_endpoint_unreachable", 502),
                               ({"rewrite_model_url": fake.base_url}, "missing_model", 400),
                               ({"rewrite_model_url": fake.base_url, "rewrite_model": "fake-model",
                                 "api_key_env": SECRET}, "invalid_option", 400)):
        response = api.post("/api/v1/studies/sig/writing-signals/", {**body, "thresholds": {"typing_speed": 40}},
                            format="json")
        assert_api_error(response, code=code, status=status)
        assert SECRET not in response.content.decode()
    out = StringIO()
    with pytest.raises(Exception):  # noqa: B017 - CommandError, exit 1
        call_command("writing_signals", "--study", "sig", "--rewrite-model-url", unreachable, "--rewrite-model", "m",
                     "--signal-threshold", "typing_speed=40", stdout=out, stderr=StringIO())
    error = json.loads(out.getvalue().strip().splitlines()[-1])
    assert error["ok"] is False and error["error"]["code"] == "model_endpoint_unreachable"
    assert "(--rewrite-model-url)" in error["error"]["message"]
    out = StringIO()
    with pytest.raises(Exception):  # noqa: B017
        call_command("writing_signals", "--study", "sig", "--background", "--rewrite-model-url", "nope",
                     "--rewrite-model", "m", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue().strip().splitlines()[-1])["error"]["code"] == "invalid_base_url"
    staff = Client()
    staff.force_login(User.objects.get(username="boss"))
    response = staff.post("/admin/annotation/rewritereview/queue/signals/",
                          {"study": "sig", "rewrite_model_url": unreachable, "rewrite_model": "m"}, follow=True)
    assert "Rewrite model URL: cannot reach" in response.content.decode()
    assert not Job.objects.filter(kind="writing_signals").exists()  # nothing queued …
    assert RewriteSettings.objects.get(study__slug="sig").signal_thresholds == {}  # … nor saved
    assert not WritingSignal.objects.exists() and not fake.chat_requests()


def test_the_job_stores_the_keys_variable_and_the_worker_reads_the_key(fake, monkeypatch, caplog, capsys,
                                                                        django_capture_on_commit_callbacks):
    ids = crowd_and_model()
    monkeypatch.setenv("STYLECROWD_REWRITE_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    api = superuser_api()
    with django_capture_on_commit_callbacks(execute=False):
        response = api.post("/api/v1/studies/sig/writing-signals/", {
            "rewrite_model_url": fake.base_url, "rewrite_model": "fake-model",
            "api_key_env": "STYLECROWD_REWRITE_KEY"}, format="json")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"]["id"])
    assert job.params["rewrite_model"] == {"rewrite_model_url": fake.base_url, "rewrite_model": "fake-model",
                                           "api_key_env": "STYLECROWD_REWRITE_KEY"}
    assert job.queue == ""  # an endpoint is I/O: the default queue, not the gpu one
    writing_signals_task(job.pk)  # as the worker runs it: it reads the key from its environment
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert {c["authorization"] for c in fake.chat_requests()} == {f"Bearer {SECRET}"}
    assert job.result["flagged"]["model_similarity"] == 1 and model_rows()[ids["paster"][0]].flagged
    assert job.result["model_rewrites"]["requests"] == 2 and job.result["model_rewrites"]["rewritten"] == 2
    stored = json.dumps([job.params, job.result, job.error, job.message, list(WritingSignal.objects.values())],
                        default=str)
    captured = capsys.readouterr()
    for place in (stored, caplog.text, captured.out, captured.err, response.content.decode()):
        assert SECRET not in place


def test_the_command_measures_with_the_endpoint_and_prints_no_key(fake, monkeypatch):
    ids = crowd_and_model()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out, err = StringIO(), StringIO()
    call_command("writing_signals", "--study", "sig", "--rewrite-model-url", fake.base_url, "--rewrite-model",
                 "fake-model", stdout=out, stderr=err)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] and summary["flagged"]["model_similarity"] == 1
    assert summary["model_rewrites"]["model"] == "fake-model" and summary["model_rewrites"]["base_url"] == \
        fake.base_url
    assert model_rows()[ids["paster"][0]].flagged
    assert fake.chat_requests()[0]["authorization"] == f"Bearer {SECRET}"  # the default variable
    assert SECRET not in out.getvalue() + err.getvalue()
    # --background: a job that names the endpoint and the variable
    out = StringIO()
    call_command("writing_signals", "--study", "sig", "--background", "--rewrite-model-url", fake.base_url,
                 "--rewrite-model", "fake-model", stdout=out, stderr=StringIO())
    job = Job.objects.get(pk=json.loads(out.getvalue().strip().splitlines()[-1])["job"])
    assert job.params["rewrite_model"]["api_key_env"] == "OPENAI_API_KEY" and SECRET not in json.dumps(job.params)


def test_the_queue_button_takes_an_optional_endpoint(fake, django_capture_on_commit_callbacks):
    crowd_and_model()
    staff = Client()
    staff.force_login(User.objects.create_superuser("rev", password="x"))
    page = staff.get("/admin/annotation/rewritereview/queue/?study=sig").content.decode()
    assert 'name="rewrite_model_url"' in page and 'name="api_key_env"' in page
    response = staff.post("/admin/annotation/rewritereview/queue/signals/",
                          {"study": "sig", "rewrite_model_url": fake.base_url, "rewrite_model": "fake-model",
                           "api_key_env": ""})
    assert response.status_code == 302
    job = Job.objects.get(kind="writing_signals")
    assert job.params["rewrite_model"]["rewrite_model"] == "fake-model"
    writing_signals_task(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.result["flagged"]["model_similarity"] == 1
    # without the fields the button measures what it measured before: no model similarity
    staff.post("/admin/annotation/rewritereview/queue/signals/", {"study": "sig"})
    plain = Job.objects.filter(kind="writing_signals").order_by("-pk").first()
    assert plain.params["rewrite_model"] is None
    writing_signals_task(plain.pk)
    plain.refresh_from_db()
    assert "no model endpoint configured" in plain.result["off"]["model_similarity"]
    assert WritingSignal.objects.filter(signal="model_similarity").count() == 10  # the model run's rows kept
