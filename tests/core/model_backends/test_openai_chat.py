"""core.model_backends: the OpenAI-compatible client and back-end against a fake endpoint over real HTTP (no
database): structured output, a reply read from prose, one corrective retry, refusals, malformed bodies, replies
outside the choices, time-outs, 429 and 5xx with back-off, and the errors that end a run."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ApplicationError
from core.model_backends import ChoiceQuestion, ReplyStatus, backend_create, backend_names, cache_key
from core.model_backends.openai_chat import EndpointError, OpenAIChatClient, choice_read
from tests.scoring.fake_openai import FakeOpenAI

QUESTION = ChoiceQuestion(
    messages=({"role": "system", "content": "Instructions."},
              {"role": "user", "content": "A1: gonna be late lol\nA2: I will be late.\nS1: Please help me.\n"
                                          "S2: pls help\n\nAnswer with exactly one of: S1-S2, S2-S1."}),
    prompt="…", choices=("S1-S2", "S2-S1"))


@pytest.fixture
def fake():
    with FakeOpenAI(sleep=1.5) as server:
        yield server


def backend(fake: FakeOpenAI, **options):
    sleeps: list[float] = []
    made = backend_create("openai", base_url=fake.base_url, model="fake-model", timeout=0.5, max_retries=2,
                          backoff=0.25, sleep=sleeps.append, **options)
    made.sleeps = sleeps
    return made


def test_registry_names_both_backends_and_refuses_an_unknown_one():
    assert backend_names() == ["local", "openai"]
    with pytest.raises(ApplicationError) as caught:
        backend_create("gpt-telepathy")
    assert caught.value.code == "unknown_backend" and caught.value.details == {"field": "backend"}


def test_answer_with_structured_output_and_token_counts(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = backend(fake)
    reply = model.answer(QUESTION)
    assert (reply.choice, reply.status, reply.requests) == ("S2-S1", ReplyStatus.ANSWERED, 1)
    assert reply.prompt_tokens > 0 and reply.completion_tokens == 7
    body = fake.chat_requests()[0]
    assert body["authorization"] == "Bearer sk-test"
    schema = body["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["answer"]["enum"] == ["S1-S2", "S2-S1"] and body["body"]["temperature"] == 0
    assert "sk-test" not in str(model.describe())  # the key is never part of what is stored


def test_prose_reply_is_read_and_no_structured_output_can_be_asked(fake):
    fake.faults.append("prose")
    reply = backend(fake, structured=False).answer(QUESTION)
    assert (reply.choice, reply.status) == ("S2-S1", ReplyStatus.ANSWERED)
    assert "response_format" not in fake.chat_requests()[0]["body"]


@pytest.mark.parametrize("fault, status", [("malformed", ReplyStatus.MALFORMED), ("no_choices", ReplyStatus.MALFORMED),
                                           ("refusal", ReplyStatus.REFUSED),
                                           ("out_of_choice", ReplyStatus.OUT_OF_CHOICE)])
def test_one_corrective_retry_then_no_answer(fake, fault, status):
    fake.faults.append(fault)
    reply = backend(fake).answer(QUESTION)
    assert (reply.choice, reply.status, reply.requests) == ("S2-S1", ReplyStatus.ANSWERED_ON_RETRY, 2)
    retry = fake.chat_requests()[1]["body"]["messages"]
    assert retry[-1]["role"] == "user" and "exactly one of: S1-S2, S2-S1" in retry[-1]["content"]
    fake.faults.extend([fault, fault])
    reply = backend(fake).answer(QUESTION)
    assert (reply.choice, reply.status, reply.requests) == (None, status, 2)


def test_429_and_500_are_retried_with_back_off_honouring_retry_after(fake):
    fake.faults.extend(["429", "500"])
    model = backend(fake)
    reply = model.answer(QUESTION)
    assert (reply.choice, reply.requests) == ("S2-S1", 3)
    assert model.sleeps == [0.0, 0.5]  # Retry-After: 0 for the 429; then 0.25 × 2¹ for the 500


@pytest.mark.slow  # a second or more (a model run over HTTP, or the whole crowd flow)
def test_time_outs_after_every_retry_record_an_error_not_an_answer(fake):
    fake.faults.extend(["timeout"] * 3)
    model = backend(fake)
    reply = model.answer(QUESTION)
    assert reply.choice is None and reply.status == ReplyStatus.ERROR and reply.requests == 3
    assert "did not answer within the time-out after 3 attempt(s)" in reply.error
    assert model.sleeps == [0.25, 0.5]


def test_429_after_every_retry_is_an_error_reply(fake):
    fake.faults.extend(["429"] * 3)
    reply = backend(fake).answer(QUESTION)
    assert reply.status == ReplyStatus.ERROR and "HTTP 429" in reply.error


@pytest.mark.parametrize("fault, code", [("401", "model_endpoint_auth"), ("404", "model_not_found")])
def test_errors_every_request_would_meet_end_the_run(fake, fault, code):
    fake.faults.append(fault)
    with pytest.raises(EndpointError) as caught:
        backend(fake).answer(QUESTION)
    assert caught.value.code == code and not caught.value.transient and caught.value.details == {"field": "base_url"}


def test_unknown_model_and_unreachable_endpoint(fake):
    with pytest.raises(EndpointError) as caught:
        backend_create("openai", base_url=fake.base_url, model="other", max_retries=0).answer(QUESTION)
    assert caught.value.code == "model_not_found" and "'other' not found" in caught.value.message
    closed = OpenAIChatClient(base_url="http://127.0.0.1:9/v1", max_retries=1, backoff=0, connect_timeout=0.5)
    with pytest.raises(EndpointError) as caught:
        closed.models()
    assert caught.value.code == "model_endpoint_unreachable" and "after 2 attempt(s)" in caught.value.message


@pytest.mark.parametrize("url", ["", "ftp://x/v1", "127.0.0.1:8000", "http://"])
def test_base_url_must_be_http(url):
    with pytest.raises(ApplicationError) as caught:
        backend_create("openai", base_url=url, model="m")
    assert caught.value.code == "invalid_base_url"


def test_check_lists_served_models(fake):
    assert backend(fake).check() == {"served_models": ["fake-model"]}


@given(st.sampled_from(["S1", "S2"]), st.text(alphabet="abc .,:", max_size=20), st.text(alphabet="xyz .!", max_size=20))
def test_a_reply_naming_exactly_one_choice_is_read_as_it(choice, before, after):
    assert choice_read(f"{before} {choice} {after}", ("S1", "S2")) == (choice, "")


def test_choice_read_edge_cases():
    choices = ("S1-S2", "S2-S1")
    assert choice_read('{"answer": "S1-S2"}', choices) == ("S1-S2", "")
    assert choice_read('```json\n{"answer": "S2-S1"}\n```', choices) == ("S2-S1", "")
    assert choice_read('{"answer": "S3"}', choices) == (None, ReplyStatus.OUT_OF_CHOICE)
    assert choice_read('{"answer": ', choices) == (None, ReplyStatus.MALFORMED)
    assert choice_read("S1-S2 or S2-S1, hard to say", choices) == (None, ReplyStatus.OUT_OF_CHOICE)
    assert choice_read("", choices) == (None, ReplyStatus.MALFORMED)
    assert choice_read("S1", ("S1", "S2")) == ("S1", "")
    assert choice_read("S1-S2", ("S1", "S2")) == (None, ReplyStatus.OUT_OF_CHOICE)  # not a choice of this item


def test_cache_key_depends_on_backend_model_and_prompt():
    one = cache_key(backend={"backend": "openai", "model": "a"}, question=QUESTION)
    assert one == cache_key(backend={"backend": "openai", "model": "a"}, question=QUESTION)
    assert one != cache_key(backend={"backend": "openai", "model": "b"}, question=QUESTION)
    other = ChoiceQuestion(messages=QUESTION.messages, prompt="…", choices=("S2-S1", "S1-S2"))
    assert one != cache_key(backend={"backend": "openai", "model": "a"}, question=other)
