"""Attacks on the participant endpoints' input limits, over real HTTP (Django's live server) on PostgreSQL.

Oversized bodies, NUL bytes and junk in tokens and item ids, deeply nested JSON, errors that echo the input, a
server error's shape and `javascript:` redirect URLs. Every answer must be JSON in the documented shape
`{"error": {"code", "message", "details"?}}` and nothing may be stored.
"""
from __future__ import annotations

import io
import json
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from annotation.models import Batch, Participant, Response, Study
from annotation.services import sessions
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from tests.annotation.helpers import make_study
from tests.gunicorn_server import gunicorn

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "<script>alert('echo-9f3c')</script>"


def assert_json_error(response: requests.Response, status: int | tuple[int, ...], code: str | None = None) -> dict:
    statuses = (status,) if isinstance(status, int) else status
    assert response.status_code in statuses, (response.status_code, response.text[:300])
    assert response.headers["Content-Type"].startswith("application/json"), response.headers["Content-Type"]
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]) <= {"code", "message", "details"}
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]


class Client:
    """A participant talking HTTP to the live server, as a script would."""

    def __init__(self, base: str, slug: str) -> None:
        self.base = base
        self.slug = slug
        self.http = requests.Session()
        self.token = ""

    def post(self, path: str, body: Any = None, *, data: bytes | None = None) -> requests.Response:
        if data is None:
            data = json.dumps(body).encode()
        return self.http.post(f"{self.base}/api/v1/{path}", data=data, headers={"Content-Type": "application/json"},
                              timeout=30)

    def start_items(self, pid: str) -> dict[str, Any]:
        created = self.post(f"studies/{self.slug}/sessions/", {"participant": pid, "platform": "prolific"})
        assert created.status_code == 201, created.text
        self.token = created.json()["token"]
        assert self.post(f"sessions/{self.token}/consent/", {"agree": True}).status_code == 200
        item = self.http.get(f"{self.base}/api/v1/sessions/{self.token}/next/", timeout=30).json()["item"]
        assert item is not None
        return item


@pytest.fixture
def study() -> Study:
    return make_study(n_instances=6, per_batch=4, slug="limits")


@pytest.fixture
def client(live_server: Any, study: Study) -> Client:
    return Client(live_server.url, study.slug)


# --- body size ----------------------------------------------------------------------------------------------------


def test_oversized_bodies_get_a_json_413_and_nothing_is_stored(client: Client) -> None:
    limit = settings.PARTICIPANT_MAX_BODY_BYTES
    assert 10_000 <= limit <= 100_000  # "tens of KB"
    big = {"participant": "P-big", "platform": "prolific", "study_ref": "x" * (limit + 1)}
    error = assert_json_error(client.post(f"studies/{client.slug}/sessions/", big), 413, "too_large")
    assert error["details"] == {"max_bytes": limit}
    assert not Participant.objects.filter(external_id="P-big").exists()

    item = client.start_items("P-ok")
    padded = {"item": item["id"], "answer": item["choices"][0], "seconds": 3, "pad": "y" * (3 * limit)}
    assert_json_error(client.post(f"sessions/{client.token}/answers/", padded), 413, "too_large")
    for path in ("consent/", "eligibility/", "start/"):
        assert_json_error(client.post(f"sessions/{client.token}/{path}", {"pad": "z" * (limit + 10)}), 413)
    # the entry page refuses a body as well (it is a GET page: nothing should be posted to it)
    page = client.http.post(f"{client.base}/s/{client.slug}/", data=b"q" * (limit + 1), timeout=30)
    assert_json_error(page, 413)
    assert Response.objects.count() == 0
    # a body under the limit is answered as usual
    ok = client.post(f"sessions/{client.token}/answers/", {"item": item["id"], "answer": item["choices"][0]})
    assert ok.status_code == 201, ok.text
    assert Response.objects.count() == 1


@pytest.mark.slow  # a real gunicorn
def test_a_body_is_refused_from_its_header_before_it_is_read(study: Study, tmp_path: Path) -> None:
    """Under gunicorn, a 50 MB announced body is answered at once from its Content-Length: the server never waits
    for (or reads) the 50 MB."""
    with gunicorn(settings_module="config.settings.test", log=tmp_path / "gunicorn.log") as base:
        where = urlsplit(base)
        started = time.monotonic()
        head, body = _raw_post(where.hostname, where.port, f"/api/v1/studies/{study.slug}/sessions/")
        assert time.monotonic() - started < 10
        # a chunked body (no Content-Length to check first; gunicorn would let Django read it to its end) is refused
        chunk = json.dumps({"participant": "P-chunked", "platform": "prolific", "pad": "c" * 60_000}).encode()
        with socket.create_connection((where.hostname, where.port), timeout=30) as conn:
            conn.sendall(
                f"POST /api/v1/studies/{study.slug}/sessions/ HTTP/1.1\r\nHost: {where.hostname}\r\n"
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
                + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n0\r\n\r\n"
            )
            chunked = b""
            while part := conn.recv(65536):
                chunked += part
        assert chunked.startswith(b"HTTP/1.1 411"), chunked[:300]
        assert b'"length_required"' in chunked and b"cccc" not in chunked
    assert not Participant.objects.filter(external_id="P-chunked").exists()
    assert head.startswith(b"HTTP/1.1 413"), head
    assert b"application/json" in head
    body = body[body.index(b"{"):body.rindex(b"}") + 1]  # gunicorn may send it chunked
    assert json.loads(body)["error"]["code"] == "too_large"
    assert not Participant.objects.filter(external_id="P-header").exists()


def _raw_post(host: str, port: int, path: str) -> tuple[bytes, bytes]:
    with socket.create_connection((host, port), timeout=30) as conn:
        conn.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {50 * 1024 * 1024}\r\nConnection: close\r\n\r\n"
            '{"participant": "P-header"'.encode()
        )
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


# --- token and item shape ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["%00", "abc%00def", "x" * 2000, "%E2%80%AE" * 3, "tok en", "..%2F..%2Fetc"])
def test_junk_tokens_get_a_json_404(client: Client, token: str) -> None:
    client.start_items("P-tok")
    for method, path, body in (
        ("get", f"sessions/{token}/", None), ("get", f"sessions/{token}/next/", None),
        ("post", f"sessions/{token}/consent/", {"agree": True}), ("post", f"sessions/{token}/start/", {}),
        ("post", f"sessions/{token}/answers/", {"item": "abc", "answer": "S1-S2"}),
    ):
        url = f"{client.base}/api/v1/{path}"
        response = client.http.get(url, timeout=30) if method == "get" else client.http.post(url, json=body, timeout=30)
        assert_json_error(response, 404)
        assert MARKER not in response.text and "x" * 100 not in response.text
    assert Response.objects.count() == 0


@pytest.mark.parametrize("item", ["abc\u0000", "\u0000", "a" * 5000, "a b", "<b>x</b>", 12, None, ["a"]])
def test_junk_item_ids_get_a_json_4xx_and_nothing_is_stored(client: Client, item: Any) -> None:
    real = client.start_items("P-item")
    response = client.post(f"sessions/{client.token}/answers/", {"item": item, "answer": real["choices"][0]})
    assert_json_error(response, (400, 404))
    assert "a" * 100 not in response.text and "<b>" not in response.text
    assert Response.objects.count() == 0


def test_nul_bytes_in_strings_are_refused(client: Client) -> None:
    response = client.post(f"studies/{client.slug}/sessions/", {"participant": "P\u0000x", "platform": "prolific"})
    assert_json_error(response, 400)
    assert Participant.objects.count() == 0
    response = client.post(f"studies/{client.slug}/sessions/",
                           {"participant": "P-nul", "platform": "prolific", "session_ref": "\u0000"})
    assert_json_error(response, 400)
    item = client.start_items("P-nul2")
    response = client.post(f"sessions/{client.token}/answers/", {"item": item["id"], "answer": "S1\u0000-S2"})
    assert_json_error(response, 400)
    # free text (a rewrite study) is stored as given: a NUL byte in it must be refused, not reach PostgreSQL
    rewrite = Client(client.base, rewrite_study("rewrite-nul").slug)
    item = rewrite.start_items("P-nul3")
    response = rewrite.post(f"sessions/{rewrite.token}/answers/", {"item": item["id"], "answer": "a fine\u0000rewrite"})
    assert_json_error(response, 400)
    assert Response.objects.count() == 0


def rewrite_study(slug: str) -> Study:
    return study_create(
        slug=slug, item_kind="rewrite", eligibility_questions=[],
        items=[{"id": f"r{i}", "source": "short text", "target_style": "formal"} for i in range(3)],
        settings=study_settings_build(annotators_per_item=3, items_per_batch=3),
    )


# --- nesting ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [40, 3000, 12000])
def test_deeply_nested_json_is_a_json_400(client: Client, depth: int) -> None:
    item = client.start_items("P-deep")
    nested = "[" * depth + "]" * depth
    body = f'{{"item": "{item["id"]}", "answer": {nested}}}'.encode()
    assert_json_error(client.post(f"sessions/{client.token}/answers/", data=body), 400)
    body = f'{{"participant": "P-deep2", "platform": "prolific", "study_ref": {nested}}}'.encode()
    assert_json_error(client.post(f"studies/{client.slug}/sessions/", data=body), 400)
    assert_json_error(client.post(f"sessions/{client.token}/consent/", data=("{" * depth).encode()), 400)
    assert Response.objects.count() == 0
    assert not Participant.objects.filter(external_id="P-deep2").exists()


def test_brackets_inside_strings_do_not_count_as_nesting(client: Client) -> None:
    other = Client(client.base, rewrite_study("rewrite-brackets").slug)
    item = other.start_items("P-brackets")
    text = "[[[[{{{{ a rewrite with many brackets }}}}]]]]" * 3
    response = other.post(f"sessions/{other.token}/answers/", {"item": item["id"], "answer": text})
    assert response.status_code == 201, response.text


# --- no echo ----------------------------------------------------------------------------------------------------


def test_errors_never_echo_the_input(client: Client) -> None:
    item = client.start_items("P-echo")
    attempts = [
        client.post(f"sessions/{client.token}/answers/", {"item": item["id"], "answer": MARKER}),
        client.post(f"sessions/{client.token}/answers/", {"item": item["id"], "answer": {MARKER: 1}}),
        client.post(f"sessions/{client.token}/answers/", {"item": "unknownitem", "answer": MARKER}),
        client.post(f"sessions/{client.token}/answers/", {"item": item["id"], "answer": "S1-S2", "seconds": MARKER}),
        client.post(f"studies/{client.slug}/sessions/", {"participant": "P-echo2", "platform": MARKER}),
        client.post(f"sessions/{client.token}/eligibility/", {"answers": {MARKER: MARKER}}),
        client.post(f"sessions/{client.token}/consent/", data=b"{" + MARKER.encode()),
        client.http.post(f"{client.base}/api/v1/sessions/{client.token}/consent/", data=b"{}",
                         headers={"Content-Type": f"text/{MARKER}"}, timeout=30),
    ]
    for response in attempts:
        assert_json_error(response, (400, 404, 409, 415))
        assert "echo-9f3c" not in response.text, response.text
    assert Response.objects.count() == 0
    # the rejected answer is reported once, without the value
    wrong = assert_json_error(attempts[0], 400)
    assert wrong["message"] == "answer must be one of ['S1-S2', 'S2-S1']."


def test_a_server_error_on_a_participant_endpoint_has_the_json_shape(client: Client, monkeypatch: Any) -> None:
    client.start_items("P-500")

    def broken(batch: Batch) -> dict:
        raise RuntimeError(f"internal detail {MARKER}")

    monkeypatch.setattr(sessions, "session_payload", broken)
    response = client.http.get(f"{client.base}/api/v1/sessions/{client.token}/", timeout=30)
    error = assert_json_error(response, 500, "server_error")
    assert "echo-9f3c" not in response.text and "internal detail" not in response.text
    assert error["message"]
    # an unknown API path is a JSON 404 as well, not Django's HTML page
    assert_json_error(client.http.get(f"{client.base}/api/v1/sessions/{client.token}/nope/", timeout=30), 404)


# --- redirect URLs --------------------------------------------------------------------------------------------


BAD_REDIRECTS = ["javascript:alert(document.cookie)", "JavaScript:alert(1)", "data:text/html,<script>x</script>",
                 " javascript:alert(1)", "//evil.example/x", "ftp://files.example/x"]


@pytest.mark.parametrize("url", BAD_REDIRECTS)
def test_create_study_refuses_a_non_http_redirect(url: str) -> None:
    make_study(n_instances=4, slug="base")  # instances to select
    out = io.StringIO()
    with pytest.raises(CommandError) as excinfo:
        call_command("create_study", "--slug", "evil", "--setup", "quadruple", "--annotators-per-item", "3",
                     "--items-per-batch", "2", "--screening-per-batch", "0", "--redirect-url", url, stdout=out)
    assert "Redirect URL must be an http:// or https:// URL" in str(excinfo.value)
    assert str(excinfo.value).endswith("(--redirect-url)")
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["ok"] is False and summary["error"]["details"] == {"field": "redirect_url",
                                                                   "redirect_url": ["must be an http(s) URL"]}
    assert not Study.objects.filter(slug="evil").exists()


def test_an_http_redirect_with_the_code_placeholder_is_accepted() -> None:
    make_study(n_instances=4, slug="base")
    out = io.StringIO()
    call_command("create_study", "--slug", "fine", "--setup", "quadruple", "--annotators-per-item", "3",
                 "--items-per-batch", "2", "--screening-per-batch", "0",
                 "--redirect-url", "https://app.prolific.com/submissions/complete?cc={code}", stdout=out)
    assert Study.objects.get(slug="fine").redirect_url.startswith("https://app.prolific.com/")


def test_the_model_and_the_database_refuse_a_javascript_redirect(study: Study) -> None:
    study.redirect_url = "javascript:alert(1)"
    with pytest.raises(ValidationError) as excinfo:
        study.full_clean()
    assert "redirect_url" in excinfo.value.message_dict
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=study.pk).update(redirect_url="javascript:alert(1)")
    study.refresh_from_db()
    assert study.redirect_url.startswith("https://")


def test_the_api_refuses_a_non_http_redirect(admin_user: Any) -> None:
    from rest_framework.test import APIClient

    make_study(n_instances=4, slug="base")
    api = APIClient()
    api.force_authenticate(admin_user)
    for url in ("javascript:alert(1)", "ftp://files.example/x"):
        response = api.post("/api/v1/studies/", {"slug": "evil-api", "setup": "quadruple", "screening_per_batch": 0,
                                                 "redirect_url": url}, format="json")
        assert response.status_code == 400, response.content
        assert set(response.json()) == {"error"} and "redirect_url" in json.dumps(response.json())
    assert not Study.objects.filter(slug="evil-api").exists()


def test_the_admin_refuses_a_javascript_redirect(client: Client, study: Study, admin_user: Any) -> None:
    from django.test import Client as DjangoClient

    browser = DjangoClient()
    browser.force_login(admin_user)
    url = f"/admin/annotation/study/{study.pk}/change/"
    form = browser.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in data.items()}
    for bad in ("javascript:alert(1)", "ftp://files.example/x"):
        data["redirect_url"] = bad
        response = browser.post(url, data)
        assert response.status_code == 200  # the form again, with the error
        assert "redirect_url" in response.context["adminform"].form.errors
    study.refresh_from_db()
    assert study.redirect_url.startswith("https://")
