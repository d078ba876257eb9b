"""The zero-setup demo runs the same participant flow on SQLite (no hot path, no row locks): a whole study filled
through the JSON API in a separate process with the demo's settings."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

SCRIPT = r"""
import json, django
django.setup()
from django.core.management import call_command
from django.db import connection
from django.test import Client
from annotation.models import Reservation, Response
from annotation.selectors import reservation_expected_answer
from annotation.services import hot_path

call_command("migrate", verbosity=0)
call_command("loaddata", "screening_questions", verbosity=0)
call_command(*"import_corpus --name demo-check --component formality --format aligned".split(),
             "fixtures/corpora/formality_informal.txt", "fixtures/corpora/formality_formal.txt")
call_command(*"generate_instances --corpus demo-check --setup quadruple --seed 1".split())
call_command(*("create_study --slug sqlite-check --setup quadruple --corpus demo-check --count 6 --seed 1 "
               "--annotators-per-item 2 --items-per-batch 3 --screening-per-batch 1 --eligibility none").split())
client = Client()
batches = 0
for i in range(5):
    r = client.post("/api/v1/studies/sqlite-check/sessions/", {"participant": f"P{i}", "platform": "prolific"},
                    content_type="application/json")
    if r.status_code == 409:
        break
    token = r.json()["token"]
    client.post(f"/api/v1/sessions/{token}/consent/", {"agree": True}, content_type="application/json")
    while True:
        item = client.get(f"/api/v1/sessions/{token}/next/").json()["item"]
        if item is None:
            break
        answer = reservation_expected_answer(public_id=item["id"])
        assert client.post(f"/api/v1/sessions/{token}/answers/", {"item": item["id"], "answer": answer},
                           content_type="application/json").status_code == 201
    batches += 1
print(json.dumps({"vendor": connection.vendor, "hot_path": hot_path.available(), "batches": batches,
                  "responses": Response.objects.filter(is_screening=False).count(),
                  "valid_correct": Response.objects.filter(is_valid=True, is_correct=True).count(),
                  "reservations": Reservation.objects.count()}))
"""


@pytest.mark.slow
def test_demo_flow_on_sqlite_fills_a_study_exactly(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.local",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}", "CELERY_BROKER_URL": ""}
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=settings.BASE_DIR, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["vendor"] == "sqlite" and summary["hot_path"] is False
    # 6 instances × k=2 = 12 slots, 3 per batch: exactly 4 batches, then the study is full
    assert summary["batches"] == 4
    assert summary["responses"] == 12
    assert summary["valid_correct"] == 12 + 4  # every instance answer and every screening answer
    assert summary["reservations"] == 16
