"""The production settings under real gunicorn, as the README deploys them, driven by Chromium.

`collectstatic` with config.settings.production (WhiteNoise's compressed manifest storage) into a fresh folder,
gunicorn on a random free port with DEBUG off, a secret key from the environment and the test PostgreSQL database;
then a participant completes a batch through the served page, the admin and /api/docs/ render, and every script,
stylesheet and image any of those pages asks for is answered 200 by this server. Nothing may leave the machine:
every request to another host is aborted and fails the test (so /api/docs/ works offline).
"""
from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from annotation.models import Participant, Response
from tests.annotation.conftest_browser import TIMEOUT_MS, browser  # noqa: F401 (fixture)
from tests.annotation.test_views_browser import (
    COMPLETED,
    answer_ordering_item,
    on_screen,
    pass_eligibility_and_instructions,
    quadruple_study,
)
from tests.gunicorn_server import REPO, gunicorn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

ASSET_TYPES = {"script", "stylesheet", "image", "font"}
ADMIN_PASSWORD = "a long production password"


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    """What an operator exports (README, "Running it for real"), for a plain-HTTP server on localhost."""
    env = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "STYLECROWD_PSEUDONYM_KEY": secrets.token_hex(32),
        "DJANGO_STATIC_ROOT": str(tmp_path / "staticfiles"),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        # plain HTTP on localhost: no TLS in front, so no HTTPS redirect and no Secure-only cookies
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "DJANGO_CONN_MAX_AGE": "600",
    }
    env.pop("DJANGO_DEBUG", None)
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--settings=config.settings.production"],
        cwd=REPO, env={**os.environ, **env, "DJANGO_SETTINGS_MODULE": "config.settings.production"},
        capture_output=True, text=True, timeout=300,
    )
    assert collect.returncode == 0, collect.stderr[-3000:]
    assert (tmp_path / "staticfiles" / "staticfiles.json").exists()  # the manifest of hashed names
    return env


class Traffic:
    """Every response and failed request of a page, and every request that tried to leave this server."""

    def __init__(self, page: Any, base: str) -> None:
        self.host = urlsplit(base).netloc
        self.responses: list[tuple[str, str, int]] = []
        self.failed: list[str] = []
        self.outside: list[str] = []
        page.on("response", lambda r: self.responses.append((r.request.resource_type, r.url, r.status)))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.resource_type} {r.url} {r.failure}"))
        page.context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        if urlsplit(route.request.url).netloc == self.host:
            route.continue_()
        else:  # offline: nothing may be fetched from a CDN or any other host
            self.outside.append(route.request.url)
            route.abort()

    def assets(self, path_part: str = "") -> list[tuple[str, str, int]]:
        return [r for r in self.responses if r[0] in ASSET_TYPES and path_part in r[1]]

    def assert_references_loaded(self, page: Any) -> list[str]:
        """Every script and stylesheet the page's DOM references was fetched from this server with a 200."""
        referenced = page.evaluate(
            "Array.from(document.querySelectorAll('script[src], link[rel=stylesheet]')).map(e => e.src || e.href)"
        )
        assert referenced, "the page references no scripts or stylesheets"
        ok = {url for _, url, status in self.responses if status == 200}
        missing = [url for url in referenced if url not in ok]
        assert not missing, f"referenced but not loaded with 200: {missing}"
        assert all(urlsplit(url).netloc == self.host for url in referenced), referenced
        return referenced

    def assert_all_assets_ok(self) -> None:
        assert not self.outside, f"requests outside the server: {self.outside}"
        assert not self.failed, f"failed requests: {self.failed}"
        bad = [r for r in self.assets() if r[2] != 200]
        assert not bad, f"assets not 200: {bad}"


def hashed(url: str) -> bool:
    """ManifestStaticFilesStorage's names: `annotator.3f2a1b4c5d6e.js`."""
    return bool(re.search(r"\.[0-9a-f]{12}\.(js|css|png|svg|ico|woff2?)$", urlsplit(url).path))


def test_production_settings_under_gunicorn_serve_a_whole_batch_the_admin_and_offline_api_docs(
    browser: Any, production_env: dict[str, str], tmp_path: Path, django_user_model: Any, artifacts_dir: Path,  # noqa: F811
) -> None:
    study = quadruple_study("production-batch")
    operator = django_user_model.objects.create_superuser("operator", "op@example.org", ADMIN_PASSWORD)
    # The server checks passwords with production's hashers, which do not include the test settings' fast MD5.
    hasher = PBKDF2PasswordHasher()
    operator.password = hasher.encode(ADMIN_PASSWORD, hasher.salt())
    operator.save(update_fields=["password"])
    log = tmp_path / "gunicorn.log"
    shots = artifacts_dir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with gunicorn(settings_module="config.settings.production", env=production_env, log=log) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        traffic = Traffic(page, base)

        # 1. a participant completes a batch through the served page
        page.goto(f"{base}/s/{study.slug}/?PROLIFIC_PID=5f1c0ffee0ddba11c0ffee42&STUDY_ID=STU1&SESSION_ID=SES1")
        on_screen(page, "consent")
        page.click("#consent-agree")
        on_screen(page, "eligibility")
        pass_eligibility_and_instructions(page)
        for _ in range(study.items_per_batch + study.screening_per_batch):
            answer_ordering_item(page)
        on_screen(page, "done")
        assert page.inner_text("#done-code") == COMPLETED
        assert len(traffic.assert_references_loaded(page)) >= 3
        page.screenshot(path=str(shots / "production-done.png"), full_page=True)
        annotator = traffic.assets("/static/annotation/")
        kinds = {Path(urlsplit(url).path).name.split(".")[0] + "." + url.rsplit(".", 1)[-1] for _, url, _ in annotator}
        assert {"annotator.js", "items.js", "annotator.css"} <= kinds, annotator
        assert all(hashed(url) for _, url, _ in annotator), annotator
        participant = Participant.objects.get(external_id="5f1c0ffee0ddba11c0ffee42")
        assert Response.objects.filter(participant=participant, is_valid=True).count() == 6

        # 2. the admin, with its stylesheets (WhiteNoise, DEBUG off)
        page.goto(f"{base}/admin/login/?next=/admin/")
        page.fill("#id_username", "operator")
        page.fill("#id_password", ADMIN_PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector("#site-name")
        page.wait_for_selector("#user-tools")  # signed in (the docs below are for staff only)
        traffic.assert_references_loaded(page)
        admin_css = traffic.assets("/static/admin/css/")
        assert any("/base." in url for _, url, _ in admin_css), admin_css
        assert page.evaluate("getComputedStyle(document.querySelector('#header')).display") == "flex"

        # 3. /api/docs/: Swagger UI from the sidecar's local copies, rendering the schema with no network
        page.goto(f"{base}/api/docs/")
        page.wait_for_selector(".swagger-ui .info .title")
        assert "StyleCrowd API" in page.inner_text(".swagger-ui .info .title")
        page.wait_for_selector("text=/api/v1/sessions/{token}/answers/")
        traffic.assert_references_loaded(page)
        page.screenshot(path=str(shots / "production-api-docs.png"))
        docs_assets = traffic.assets("/static/drf_spectacular_sidecar/")
        assert {"swagger-ui-bundle", "swagger-ui-standalone-preset", "swagger-ui"} <= {
            Path(urlsplit(url).path).name.split(".")[0] for _, url, _ in docs_assets}, docs_assets

        traffic.assert_all_assets_ok()
        assert errors == []
        context.close()

        # WhiteNoise serves the compressed copy with far-future caching; DEBUG is off (no yellow page)
        css = next(url for _, url, _ in annotator if url.endswith(".css"))
        request = urllib.request.Request(css, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert "max-age=315360000" in response.headers["Cache-Control"]
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{base}/no-such-page/", timeout=30)
        assert missing.value.code == 404 and b"DEBUG = True" not in missing.value.read()
    assert "Traceback" not in log.read_text()
