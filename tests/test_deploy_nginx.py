"""The production recipe's buffering proxy (deploy/nginx/): its limits match the settings, and in front of real
gunicorn it keeps `/api/v1/ping/` answering while 40 slow uploads from one address trickle in, which gunicorn alone
does not (each slow body holds one of its threads). nginx comes from Debian (`make nginx`, which `make test` runs);
without it these tests fail rather than skip."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import requests
from django.conf import settings

from benchmarks.slow_bodies import PROXY_CONF, nginx_proxy, slow_bodies_measure
from tests.gunicorn_server import gunicorn

SITE_CONF = PROXY_CONF.parent / "stylecrowd.conf"


def directive(name: str) -> str:
    found = re.findall(rf"^\s*{name}\s+([^;]+);", PROXY_CONF.read_text(), flags=re.MULTILINE)
    assert len(found) == 1, (name, found)
    return found[0].strip()


def test_the_proxy_limits_match_the_settings():
    # Uploads up to STYLECROWD_UPLOAD_MAX_MB pass (with their multipart framing), little more.
    size = directive("client_max_body_size")
    cap = settings.STYLECROWD_UPLOAD_MAX_MB
    assert size.endswith("m") and cap < int(size[:-1]) <= cap + 2
    # A participant's body (at most STYLECROWD_PARTICIPANT_MAX_BODY_BYTES) is buffered in memory.
    assert int(directive("client_body_buffer_size").removesuffix("k")) * 1024 >= settings.PARTICIPANT_MAX_BODY_BYTES
    assert directive("proxy_request_buffering") == "on" and directive("proxy_buffering") == "on"
    assert int(directive("client_body_timeout").removesuffix("s")) <= 30  # a stalled body is dropped
    # The address the throttles count (DJANGO_TRUSTED_PROXY_COUNT=1): set by nginx, never the client's own header.
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in PROXY_CONF.read_text()
    site = SITE_CONF.read_text()
    assert "ssl_certificate " in site and "stylecrowd-proxy.conf" in site and "return 301 https://" in site


@pytest.mark.slow  # real gunicorn and nginx, two 8-second rounds of slow uploads
@pytest.mark.django_db(transaction=True)
def test_slow_bodies_starve_gunicorn_alone_but_not_behind_nginx(tmp_path: Path):
    static = tmp_path / "static"
    (static / "core").mkdir(parents=True)
    (static / "core" / "probe.css").write_text("body{}")
    with gunicorn(settings_module="config.settings.test", log=tmp_path / "gunicorn.log", workers=2,
                  threads=4) as direct:
        alone = slow_bodies_measure(base=direct, slow=40, seconds=8)
        with nginx_proxy(upstream_port=int(direct.rsplit(":", 1)[1]), work=tmp_path / "nginx",
                         static_root=static) as proxied:
            behind = slow_bodies_measure(base=proxied, slow=40, seconds=8)
            asset = requests.get(f"{proxied}/static/core/probe.css", timeout=10)
            assert requests.get(f"{proxied}/api/v1/ping/", timeout=10).status_code == 200
    # Alone: the 8 threads wait on slow bodies and the pings time out (the attack run's finding).
    assert alone["ping_timeouts"] >= 1, alone
    # Behind nginx: every ping answered, quickly.
    assert behind["pings"] >= 8 and behind["ping_timeouts"] == 0 and behind["ping_max_ms"] < 2000, behind
    assert asset.status_code == 200 and asset.text == "body{}" and "immutable" in asset.headers["Cache-Control"]
