"""Operators' settings: `check --deploy`, the Celery app's settings module, persistent connections that survive a
database restart (CONN_HEALTH_CHECKS), under real gunicorn and PostgreSQL."""
from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from tests.gunicorn_server import REPO, gunicorn


def run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**clean, **env}, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_check_deploy_leaves_only_the_two_documented_hsts_warnings() -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--settings=config.settings.production"],
        cwd=REPO, env={**clean, "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
                                   "STYLECROWD_PSEUDONYM_KEY": secrets.token_hex(32)}, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    warnings = sorted(set(re.findall(r"\((security\.W\d+|\w+\.[EW]\d+)\)", result.stderr)))
    assert warnings == ["security.W005", "security.W021"], result.stderr
    readme = (REPO / "README.md").read_text()
    assert "security.W005" in readme and "security.W021" in readme  # each remaining warning is explained


def test_celery_app_never_falls_back_to_debug_settings() -> None:
    code = ("import config.celery, os; from django.conf import settings; "
            "print(os.environ['DJANGO_SETTINGS_MODULE'], settings.DEBUG)")
    refused = run_python(code, {})
    assert refused.returncode != 0 and "DJANGO_SECRET_KEY must be set" in refused.stderr
    without_key = run_python(code, {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "STYLECROWD_PSEUDONYM_KEY": ""})
    assert without_key.returncode != 0 and "STYLECROWD_PSEUDONYM_KEY must be set" in without_key.stderr
    ok = run_python(code, {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
                           "STYLECROWD_PSEUDONYM_KEY": secrets.token_hex(32)})
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["config.settings.production", "False"]
    assert "config.settings.local" not in (REPO / "config" / "celery.py").read_text()


@pytest.mark.slow  # seconds: out of `make test-fast`
@pytest.mark.django_db(transaction=True)
def test_persistent_connections_survive_a_database_restart(tmp_path: Path) -> None:
    """DJANGO_CONN_MAX_AGE=600: after every server connection is killed (as a PostgreSQL restart does), the next
    requests on every thread are answered 200, because each connection is checked before it is reused."""
    with gunicorn(settings_module="config.settings.test", env={"DJANGO_CONN_MAX_AGE": "600"},
                  log=tmp_path / "gunicorn.log", workers=1, threads=3) as base:
        def ping() -> int:
            try:
                with urllib.request.urlopen(f"{base}/api/v1/ping/db/", timeout=30) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code

        assert [ping() for _ in range(12)] == [200] * 12  # every thread holds a persistent connection now
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            killed = cursor.fetchone()[0]
        assert killed >= 1
        assert [ping() for _ in range(12)] == [200] * 12
