"""Outbound calls only where allowed (core/outbound.py): a model endpoint or a rewrite endpoint a researcher names is
checked against MODEL_ALLOWED_URLS at the door (nothing stored) and again at call time; loopback and private
addresses only when listed (the host resolved, every address checked); redirects are not followed; and the
refusal reads the same whatever the port answers, so the doors are no port scanner."""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotation.services.writing_signals.model_rewrite import rewrite_model_options
from core.errors import ApplicationError
from core.model_backends.openai_chat import MalformedReply, OpenAIChatClient
from core.models import Job
from core.outbound import outbound_url_check, url_allowed
from scoring.models import ModelRun
from tests import factories as f
from tests.helpers import assert_api_error
from tests.scoring.fake_openai import FakeOpenAI

PUBLIC_ONLY = ["https://*"]


@pytest.fixture
def three_ports() -> Iterator[dict[str, object]]:
    """A closed port, an open port that never answers (a raw TCP listener counting connections) and an HTTP
    service (an OpenAI-compatible fake), all on loopback."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    with FakeOpenAI() as fake:
        yield {"urls": {"closed": f"http://127.0.0.1:{closed_port}/v1",
                        "open": f"http://127.0.0.1:{listener.getsockname()[1]}/v1", "http": fake.base_url},
               "listener": listener, "fake": fake}
    listener.close()


def _accepted(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://localhost/v1", "https://127.0.0.1/v1",
                                 "https://10.0.0.5/v1", "https://192.168.1.20/v1", "https://172.16.0.1/v1",
                                 "https://169.254.169.254/latest", "https://[::1]/v1", "https://100.64.0.1/v1",
                                 "https://0.0.0.0/v1", "https://no-such-host.invalid/v1"])
def test_loopback_private_and_unresolvable_hosts_are_refused_unless_listed(url: str) -> None:
    assert not url_allowed(url, PUBLIC_ONLY)  # localhost is resolved: its addresses are loopback


def test_a_public_address_passes_the_wildcard_and_a_listed_origin_passes_as_listed() -> None:
    assert url_allowed("https://1.1.1.1/v1", PUBLIC_ONLY) and not url_allowed("https://1.1.1.1:8443/", PUBLIC_ONLY)
    assert not url_allowed("http://1.1.1.1/v1", PUBLIC_ONLY)  # the wildcard is for https only
    listed = ["http://127.0.0.1:8000", "http://gpu-box.lab:*"]
    assert url_allowed("http://127.0.0.1:8000/v1", listed) and not url_allowed("http://127.0.0.1:8001/v1", listed)
    assert url_allowed("http://gpu-box.lab:9000/v1", listed) and not url_allowed("https://gpu-box.lab/v1", listed)
    assert not url_allowed("http://127.0.0.1:8000/v1", [])  # an empty list: no endpoint at all


@pytest.mark.django_db
def test_the_model_run_door_refuses_loopback_ports_alike_and_connects_to_none(api, settings, three_ports) -> None:
    settings.MODEL_ALLOWED_URLS = PUBLIC_ONLY
    study, _ = f.annotated_study(answers=[["S2-S1"]])
    messages = set()
    for url in three_ports["urls"].values():
        response = api.post("/api/v1/model-runs/", {"study": study.slug, "backend": "openai", "base_url": url,
                                                    "model": "fake-model"}, format="json")
        error = assert_api_error(response, code="url_not_allowed", status=400)
        messages.add(error["message"].replace(url, "URL"))
    assert len(messages) == 1 and "MODEL_ALLOWED_URLS" in messages.pop()  # one wording for closed, open and HTTP
    assert not _accepted(three_ports["listener"]) and three_ports["fake"].requests == []  # nothing connected
    assert not ModelRun.objects.exists() and not Job.objects.exists()


def test_the_writing_signals_endpoint_is_held_to_the_same_list(settings, three_ports) -> None:
    settings.MODEL_ALLOWED_URLS = PUBLIC_ONLY
    messages = set()
    for url in three_ports["urls"].values():
        with pytest.raises(ApplicationError) as caught:
            rewrite_model_options(base_url=url, model="fake-model")
        assert caught.value.code == "url_not_allowed" and caught.value.details["field"] == "rewrite_model_url"
        messages.add(caught.value.message.replace(url, "URL"))
    assert len(messages) == 1 and messages.pop().startswith("Rewrite model URL: this server does not connect to")
    assert not _accepted(three_ports["listener"]) and three_ports["fake"].requests == []


def test_listed_loopback_works_and_is_checked_again_at_call_time(settings) -> None:
    settings.MODEL_ALLOWED_URLS = ["http://127.0.0.1:*"]
    with FakeOpenAI() as fake:
        client = OpenAIChatClient(base_url=fake.base_url, max_retries=0)
        assert client.models() == ["fake-model"]
        settings.MODEL_ALLOWED_URLS = PUBLIC_ONLY  # the list changed (or the name resolves elsewhere) since the door
        with pytest.raises(ApplicationError) as caught:
            client.chat(model="fake-model", messages=[{"role": "user", "content": "hi"}])
        assert caught.value.code == "url_not_allowed"
        assert fake.chat_requests() == []
        client.close()


class _Redirect(BaseHTTPRequestHandler):
    target = ""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(302)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_a_redirect_to_another_host_is_not_followed(settings) -> None:
    settings.MODEL_ALLOWED_URLS = ["http://127.0.0.1:*", "http://localhost:*"]
    with FakeOpenAI() as elsewhere:
        handler = type("Handler", (_Redirect,), {"target": elsewhere.base_url.replace("127.0.0.1", "localhost")})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            client = OpenAIChatClient(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", max_retries=0)
            with pytest.raises(MalformedReply):
                client.models()
            client.close()
        finally:
            server.shutdown()
            server.server_close()
        assert elsewhere.requests == []


def test_the_refusal_names_the_setting_and_nothing_of_the_address() -> None:
    with pytest.raises(ApplicationError) as caught:
        outbound_url_check("http://127.0.0.1:5432/", allowed=PUBLIC_ONLY, setting="MODEL_ALLOWED_URLS")
    assert caught.value.status == 400 and caught.value.details == {"setting": "MODEL_ALLOWED_URLS"}
    for word in ("refused", "closed", "open", "answer", "reach"):
        assert word not in caught.value.message.lower()
