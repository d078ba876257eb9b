""""Responses over time" is dated by the responses' own days on PostgreSQL and on SQLite (the demo), where pandas
parses the text timestamps into microseconds and the old division by 1e9 gave 1970-01-21."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

from scoring.agreement.selectors import responses_frame
from scoring.agreement.stats.summary import _timeline
from tests.factories import annotated_study

SCRIPT = r"""
import json, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from scoring.agreement.selectors import responses_frame
from scoring.agreement.stats.summary import _timeline
from tests.factories import annotated_study
study, _ = annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3])
frame = responses_frame(study_id=study.pk)
print(json.dumps({"first": float(frame["answered_at"].min()), "timeline": _timeline(frame)}))
"""
JAN_1_2026 = 1767225600.0  # the factory's first answer: 2026-01-01T00:00:00Z


@pytest.mark.django_db
def test_timeline_dates_on_postgresql():
    study, _ = annotated_study(answers=[["S2-S1"] * 3, ["S1-S2"] * 3])
    frame = responses_frame(study_id=study.pk)
    assert frame["answered_at"].min() == JAN_1_2026
    assert _timeline(frame) == [{"day": "2026-01-01", "valid": 6, "invalid": 0}]


@pytest.mark.slow
def test_timeline_dates_on_sqlite(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.local",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'dates.sqlite3'}", "CELERY_BROKER_URL": ""}
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=settings.BASE_DIR, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["first"] == JAN_1_2026
    assert summary["timeline"] == [{"day": "2026-01-01", "valid": 6, "invalid": 0}]
