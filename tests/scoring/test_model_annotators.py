"""Model annotators through the OpenAI-compatible back-end, against a fake endpoint over real HTTP."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from scoring.models import ModelAnswer
from tests import factories as f
from tests.scoring.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db


def _cli(*args: str) -> dict:
    out = io.StringIO()
    call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_smoke_oracle_answers_every_order_correctly():
    study, items = f.annotated_study(answers=[["S2-S1"] * 3, ["S1-S2", "S2-S1", "S2-S1"]])
    with FakeOpenAI() as fake:
        summary = _cli("--study", study.slug, "--base-url", fake.base_url, "--model", "fake-model", "--json")
    assert summary["ok"] and summary["items"] == 2 and summary["asks"] == 8
    assert summary["accuracy"] == 1.0 and summary["order_sensitive_share"] == 0.0
    assert ModelAnswer.objects.filter(answer="S2-S1").count() == 8
