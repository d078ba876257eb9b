"""`manage.py data_plan --study SLUG`: the Markdown on stdout or in --out, then the JSON summary line; an unknown
study is refused with a non-zero exit."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.annotation.helpers import make_study

pytestmark = pytest.mark.django_db


def test_data_plan_writes_markdown_then_its_summary(tmp_path):
    make_study(slug="plan", eligibility=[])
    out = io.StringIO()
    call_command("data_plan", "--study", "plan", stdout=out)
    lines = out.getvalue().strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["ok"] is True and summary["study"] == "plan" and summary["retention_days"] == 365
    assert lines[0] == "## Data management plan: study `plan` (plan)" and "### Withdrawal and erasure" in lines

    target = tmp_path / "plan.md"
    out = io.StringIO()
    call_command("data_plan", "--study", "plan", "--out", str(target), stdout=out)
    assert json.loads(out.getvalue().strip())["out"] == str(target)
    assert target.read_text().startswith("## Data management plan") and "### Consent versions" in target.read_text()


def test_an_unknown_study_is_refused():
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("data_plan", "--study", "nope", stdout=out)
    assert json.loads(out.getvalue().strip())["error"]["code"] == "unknown_study"
