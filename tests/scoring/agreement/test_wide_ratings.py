"""A wide ratings file whose raters are named by id columns (`--rater-ids`, Pauli et al.'s `prolificID_1`…`_3`):
each rating is stored under the rater's own id, not the column's position; a position is a different person on
different rows and files, and the per-annotator models' positional-id warning fires only where no ids were given.
The ids leave the database as keyed pseudonyms only. Bad id columns or cells are named by file, line and column,
and nothing is stored. The same option at the CLI, the API and the admin."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Participant, Response, Study, StudyItem
from core.errors import ApplicationError
from core.models import ErasureTombstone
from core.pseudonyms import person_key, pseudonym
from scoring.agreement import selectors
from scoring.agreement.positional_ids import positional_ids
from scoring.agreement.wide_ratings import WideMapping, wide_read
from tests.core.test_erasure import rows_mentioning

pytestmark = pytest.mark.django_db

# Made-up ids in the shape of Prolific's (24 hex digits); never real people's.
P = {name: f"{n:02d}" + "a1b2c3d4e5f6a7b8c9d0e1" for n, name in enumerate("abcde", start=1)}
RAW = {"raters": "AnswerA=style_strength,AnswerB=content_preservation"}
HEADER = ("sample_id,input,output,style_to,reference,AnswerA_1,AnswerA_2,AnswerA_3,AnswerB_1,AnswerB_2,AnswerB_3,"
          "prolificID_1,prolificID_2,prolificID_3,annoB_mean")


def _row(n: int, a: tuple[str, str, str], b: tuple[str, str, str], ids: tuple[str, str, str]) -> str:
    return f"{n},source {n},rewrite {n},formal,ref {n},{','.join(a)},{','.join(b)},{','.join(ids)},3.0"


# Position 1 is person a on row 2, person c on row 3, person d on row 4: a position is nobody in particular.
ROWS_1 = [
    _row(1, ("5", "4", "3"), ("1", "2", "3"), (P["a"], P["b"], P["c"])),
    _row(2, ("4", "4", "2"), ("5", "5", "1"), (P["c"], P["a"], P["b"])),
    _row(3, ("1", "2", ""), ("3", "4", ""), (P["d"], P["b"], "")),  # the third rater rated nothing: no id needed
]
ROWS_2 = [
    _row(1, ("2", "3", "4"), ("4", "3", "2"), (P["e"], P["d"], P["a"])),
    _row(2, ("5", "5", "5"), ("2", "2", "2"), (P["a"], P["e"], P["d"])),
]


def _file(tmp_path: Path, name: str, rows: list[str], header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _command(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("import_annotations", *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _import(path: Path, *extra: str, study: str = "pauli") -> dict[str, Any]:
    return _command("--study", study, "--wide", "--raters", RAW["raters"], "--scale", "1-5", *extra, str(path))


def _nothing_stored() -> None:
    assert not Study.objects.exists() and not StudyItem.objects.exists()
    assert not Participant.objects.exists() and not Response.objects.exists()


def _ratings(study: str) -> dict[tuple[str, str, str], str]:
    """(item, rater's id, question) -> answer, as stored."""
    return {(r.study_item.external_id, r.participant.external_id, r.question): r.answer
            for r in Response.objects.filter(study__slug=study).select_related("study_item", "participant")}


def _positional(study: str) -> tuple[bool, str | None]:
    """The per-annotator models' check, on the study's answers and its imported annotators' names (as
    `aggregation_compare` and `study_uncertainty` call it)."""
    study_id = Study.objects.get(slug=study).pk
    answers = selectors.responses_frame(study_id=study_id, question="content_preservation")
    people = selectors.participants_frame(study_id=study_id)
    names = dict(zip(people["participant_id"], people["external_id"].astype(str), strict=True))
    return positional_ids(items=answers["item_id"].to_numpy(), workers=answers["participant_id"].to_numpy(),
                          names=names)


def test_ratings_are_stored_under_the_raters_own_ids_across_rows_and_files(tmp_path):
    first = _import(_file(tmp_path, "syntest_anno1.csv", ROWS_1), "--rater-ids", "prolificID", "--dataset", "one")
    assert first["annotators"] == 4 and first["annotator_ids"] == "people" and first["responses"] == 16
    # The explicit columns are the same option's other spelling.
    second = _import(_file(tmp_path, "syntest_anno2.csv", ROWS_2), "--rater-ids",
                     "prolificID_1,prolificID_2,prolificID_3", "--dataset", "two")
    assert second["annotators_created"] == 1 and second["responses"] == 12  # only e is new; a and d come back
    people = Participant.objects.filter(study__slug="pauli")
    assert sorted(people.values_list("external_id", flat=True)) == sorted(P.values())
    assert set(people.values_list("platform", flat=True)) == {"imported"}
    ratings = _ratings("pauli")
    # Row 2 of file 1 (line 3): AnswerB_1 = 5 is c's, AnswerB_3 = 1 is b's; file 2's first row: AnswerA_3 = 4 is a's.
    assert ratings[("syntest_anno1-3", P["c"], "content_preservation")] == "5"
    assert ratings[("syntest_anno1-3", P["b"], "content_preservation")] == "1"
    assert ratings[("syntest_anno2-2", P["a"], "style_strength")] == "4"
    assert not [key for key in ratings if key[1].startswith("rater-")]
    a_items = {item for item, rater, question in ratings if rater == P["a"] and question == "content_preservation"}
    assert a_items == {"syntest_anno1-2", "syntest_anno1-3", "syntest_anno2-2", "syntest_anno2-3"}

    # Agreement pooled over the files sees five people, not three positions.
    agreement = json.loads(_call("compute_agreement", "--study", "pauli", "--question", "content_preservation",
                                 "--resamples", "0", "--json"))
    assert agreement["n_annotators"] == 5, agreement

    # What leaves the database carries pseudonyms only.
    out = tmp_path / "responses.csv"
    exported = _command_any("export_responses", "--study", "pauli", "--out", str(out))
    assert exported["participant_ids"] == "pseudonyms"
    text = out.read_text()
    assert not [raw for raw in P.values() if raw in text]
    assert pseudonym(platform="imported", external_id=P["a"]) in text


def _call(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip().splitlines()[-1]


def _command_any(name: str, *args: str) -> dict[str, Any]:
    return json.loads(_call(name, *args))


def test_the_positional_id_warning_fires_for_positions_and_not_for_ids(tmp_path):
    complete = [row for row in ROWS_1 if ",,," not in row][:2]
    positions = _import(_file(tmp_path, "pos.csv", complete), study="positions")
    assert positions["annotator_ids"] == "positions"
    positional, warning = _positional("positions")
    assert positional and "rater-1 … rater-3" in str(warning) and "numbered like positions" in str(warning)

    ids = _import(_file(tmp_path, "ids.csv", complete), "--rater-ids", "prolificID", study="ids")
    assert ids["annotator_ids"] == "people"
    # The same two rows: a, b and c each rated both items, under their ids, so they are not taken for positions.
    positional, warning = _positional("ids")
    assert not positional and "numbered like positions" not in str(warning)
    # Where a position is different people on different rows, nobody rated everything: no warning at all.
    _import(_file(tmp_path, "mixed.csv", ROWS_1[:1] + ROWS_2), "--rater-ids", "prolificID", study="mixed")
    assert _positional("mixed") == (False, None)


@pytest.mark.parametrize(("rater_ids", "expected"), [
    ("workerId", r"lai.csv:1: missing rater id column\(s\) 'workerId' \(neither a column nor the prefix of "
                 r"workerId_1"),
    ("prolificID_1,prolificID_2,prolificID_4", r"lai.csv:1: missing rater id column\(s\) 'prolificID_4'"),
    ("prolificID_1,prolificID_2", r"lai.csv:1: no rater id column for AnswerA_3, AnswerB_3 \(the id columns "
                                  r"prolificID_1, prolificID_2 name raters 1, 2"),
    ("input", r"lai.csv:1: rater id column 'input' does not end in the rater's number"),
    ("prolificID,annoB_mean", r"lai.csv:1: rater id column 'annoB_mean' names rater 'mean', who has no rating "
                              r"column"),
    ("prolificID,WorkerId_1", r"lai.csv:1: rater id columns 'prolificID_1' and 'WorkerId_1' both name rater 1"),
])
def test_a_missing_id_column_is_named_and_nothing_is_stored(tmp_path, rater_ids, expected):
    path = _file(tmp_path, "lai.csv", [f"{row},{P['e']}" for row in ROWS_1], header=HEADER + ",WorkerId_1")
    with pytest.raises(CommandError, match=expected):
        _import(path, "--rater-ids", rater_ids)
    _nothing_stored()


def test_a_rating_without_its_raters_id_or_one_rater_twice_is_named_by_line_and_column(tmp_path):
    rows = list(ROWS_1)
    rows[0] = rows[0].replace(P["b"], "  ")  # AnswerA_2 and AnswerB_2 rated, prolificID_2 blank
    rows[1] = _row(2, ("4", "4", "2"), ("5", "5", "1"), (P["c"], P["a"], P["c"]))  # c twice on the same row
    path = _file(tmp_path, "lai.csv", rows)
    with pytest.raises(CommandError) as error:
        _import(path, "--rater-ids", "prolificID")
    message = str(error.value)
    assert "lai.csv:2: column 'prolificID_2': empty, but 'AnswerA_2' holds a rating; column 'prolificID_2': empty, " \
           "but 'AnswerB_2' holds a rating" in message
    assert "lai.csv:3: column 'prolificID_3': the same rater as 'prolificID_1', so 'AnswerA_1' and 'AnswerA_3' rate " \
           "style_strength twice for one rater" in message
    assert "'AnswerB_1' and 'AnswerB_3' rate content_preservation twice" in message
    assert P["c"] not in message  # the message names columns, never the id
    assert "lai.csv:4" not in message  # an empty id where nothing was rated is no problem
    _nothing_stored()


def test_a_person_who_asked_for_erasure_is_refused_by_their_id_column(tmp_path):
    ErasureTombstone.objects.create(person_key=person_key(platform="prolific", external_id=P["b"]),
                                    platform="prolific", erased_at=timezone.now())
    with pytest.raises(CommandError) as error:
        _import(_file(tmp_path, "lai.csv", ROWS_1), "--rater-ids", "prolificID")
    assert "asked for their data to be erased" in str(error.value) and P["b"] not in str(error.value)
    assert not Response.objects.exists()


def test_an_id_only_imported_is_erased_by_its_platform_erasure_and_its_re_import_is_refused(tmp_path):
    """import with ids -> erase_participant --platform prolific (no Prolific participant of ours holds the id) ->
    the ratings are gone, the others' kept -> the same file's re-import is refused by line, the message without the
    raw id, nothing stored."""
    path = _file(tmp_path, "syntest_anno1.csv", ROWS_1)
    _import(path, "--rater-ids", "prolificID")
    before = _ratings("pauli")
    mine = {key for key in before if key[1] == P["b"]}
    assert len(mine) == 6 and not Participant.objects.exclude(platform="imported").exists()
    out = StringIO()
    call_command("erase_participant", "--platform", "prolific", "--id", P["b"], stdout=out)
    dry = json.loads(out.getvalue().strip().splitlines()[-1])
    assert dry["applied"] is False and dry["imported"] == {"participants": 1, "ratings": 6}
    assert _ratings("pauli") == before  # a dry run changes nothing: the id is still stored, not swapped
    out = StringIO()
    call_command("erase_participant", "--platform", "prolific", "--id", P["b"], "--apply", stdout=out)
    done = json.loads(out.getvalue().strip().splitlines()[-1])
    assert done["imported"] == {"participants": 1, "ratings": 6} and P["b"] not in out.getvalue()
    assert _ratings("pauli") == {key: v for key, v in before.items() if key not in mine}
    assert rows_mentioning(P["b"]) == {}
    with pytest.raises(CommandError) as refused:
        _import(path, "--rater-ids", "prolificID")
    message = str(refused.value)
    assert "asked for their data to be erased" in message and P["b"] not in message
    assert "syntest_anno1.csv:2:" in message and "syntest_anno1.csv:3:" in message  # b rated on every row
    assert _ratings("pauli") == {key: v for key, v in before.items() if key not in mine}  # nothing half-stored


def test_rater_ids_without_wide_are_refused_not_ignored(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text(f"item,annotator,value\ni1,{P['a']},3\n", encoding="utf-8")
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("import_annotations", "--study", "long", "--question", "q", "--scale", "1-5", "--rater-ids",
                     "prolificID", str(long), stdout=out, stderr=StringIO())
    assert "add --wide" in str(refused.value)
    body = json.loads(out.getvalue().strip().splitlines()[-1])
    assert body["error"]["code"] == "invalid_arguments" and body["error"]["details"]["field"] == "rater_ids"
    with pytest.raises(CommandError, match="add --wide"):  # the items path (a long file of rewrites) too
        call_command("import_annotations", "--study", "long", "--items", str(long), "--scale", "1-5",
                     "--rater-ids", "prolificID", str(long), stdout=StringIO(), stderr=StringIO())
    assert WideMapping.of_options(wide=False, rater_ids=" ") is None
    assert WideMapping.of_options(wide=True, rater_ids="prolificID").rater_ids == ("prolificID",)
    _nothing_stored()


def test_without_rater_ids_raters_stay_positions():
    mapping = WideMapping.parse(raters=RAW["raters"])
    assert mapping.rater_ids == ()
    assert WideMapping.parse(rater_ids=" prolificID , prolificID ").rater_ids == ("prolificID",)
    with pytest.raises(ApplicationError, match="not NAME=VALUE"):
        WideMapping.parse(rater_ids="1=prolificID_1")


def test_the_reader_keeps_positions_when_no_ids_are_given(tmp_path):
    items, rows = wide_read(path=_file(tmp_path, "lai.csv", ROWS_1), mapping=WideMapping.parse(raters=RAW["raters"]),
                            numeric=True, domain=[1, 2, 3, 4, 5])
    assert len(items) == 3 and {r.annotator for r in rows} == {"rater-1", "rater-2", "rater-3"}


# --- the API's and the admin's doors ---------------------------------------------------------------------------


def test_the_api_takes_rater_ids_and_names_a_bad_cell(api, tmp_path):
    from tests.helpers import assert_api_error

    good = _file(tmp_path, "syntest_anno1.csv", ROWS_1)
    response = api.post("/api/v1/annotation-imports/", {
        "study": "api-ids", "scale": "1-5", "wide": "true", "raters": RAW["raters"], "rater_ids": "prolificID",
        "ratings": SimpleUploadedFile("syntest_anno1.csv", good.read_bytes())}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["annotator_ids"] == "people" and response.json()["annotators"] == 4
    assert set(Participant.objects.filter(study__slug="api-ids").values_list("external_id", flat=True)) == {
        P["a"], P["b"], P["c"], P["d"]}
    bad = _file(tmp_path, "bad.csv", [ROWS_1[0].replace(P["a"], "")])
    response = api.post("/api/v1/annotation-imports/", {
        "study": "api-bad", "scale": "1-5", "wide": "true", "raters": RAW["raters"], "rater_ids": "prolificID",
        "ratings": SimpleUploadedFile("bad.csv", bad.read_bytes())}, format="multipart")
    error = assert_api_error(response, code="bad_rows", status=400)
    assert "bad.csv:2: column 'prolificID_1': empty, but 'AnswerA_1' holds a rating" in error["message"]
    assert not Study.objects.filter(slug="api-bad").exists()


def test_the_admin_upload_takes_rater_ids(admin_client, tmp_path):
    url = "/admin/scoring/agreementrun/import/"
    assert b"Rater id columns" in admin_client.get(url).content
    path = _file(tmp_path, "syntest_anno1.csv", ROWS_1)
    missing = admin_client.post(url, {"study": "adm", "scale": "1-5", "wide": "on", "raters": RAW["raters"],
                                      "rater_ids": "WorkerId",
                                      "ratings": SimpleUploadedFile("syntest_anno1.csv", path.read_bytes())})
    assert missing.status_code == 200 and b"syntest_anno1.csv:1: missing rater id column(s)" in missing.content
    _nothing_stored()
    done = admin_client.post(url, {"study": "adm", "scale": "1-5", "wide": "on", "raters": RAW["raters"],
                                   "rater_ids": "prolificID",
                                   "ratings": SimpleUploadedFile("syntest_anno1.csv", path.read_bytes())})
    assert done.status_code == 302
    assert set(Participant.objects.filter(study__slug="adm").values_list("external_id", flat=True)) == {
        P["a"], P["b"], P["c"], P["d"]}


def test_the_api_and_the_admin_refuse_rater_ids_without_wide(api, admin_client, tmp_path):
    from tests.helpers import assert_api_error

    path = _file(tmp_path, "syntest_anno1.csv", ROWS_1)
    response = api.post("/api/v1/annotation-imports/", {
        "study": "api-ids", "scale": "1-5", "rater_ids": "prolificID",
        "ratings": SimpleUploadedFile("syntest_anno1.csv", path.read_bytes())}, format="multipart")
    error = assert_api_error(response, code="invalid_arguments", status=400)
    assert "add --wide" in error["message"] and "\"wide\": true" in error["message"]
    page = admin_client.post("/admin/scoring/agreementrun/import/", {
        "study": "adm", "scale": "1-5", "raters": RAW["raters"], "rater_ids": "prolificID",
        "ratings": SimpleUploadedFile("syntest_anno1.csv", path.read_bytes())})
    assert page.status_code == 200 and b"name columns of a wide file" in page.content
    _nothing_stored()
