"""import_annotations: long-format CSV in, study/items/participants/responses out; bad rows reported by line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Participant, Response, Study, StudyItem

pytestmark = pytest.mark.django_db


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def fails(*args: str) -> tuple[str, dict]:
    out = io.StringIO()
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=out)
    return str(error.value), json.loads(out.getvalue().strip().splitlines()[-1])


def test_ordering_annotations_with_correct_values_give_majority_accuracy(tmp_path: Path) -> None:
    path = tmp_path / "prolific.csv"
    lines = ["item,annotator,value,correct,item_text"]
    for item, answers in (("i1", "AAAAB"), ("i2", "ABBBB"), ("i3", "AABBB")):
        for n, letter in enumerate(answers):
            lines.append(f"{item},w{n},{'S1-S2' if letter == 'A' else 'S2-S1'},S1-S2,text of {item}")
    path.write_text("\n".join(lines) + "\n")
    summary = run("import_annotations", "--study", "ext", "--question", "order", "--scale", "S1-S2,S2-S1", str(path))
    assert summary["items_created"] == 3 and summary["responses"] == 15 and summary["annotators_per_item"] == 5
    study = Study.objects.get(slug="ext")
    assert study.item_kind == "quadruple" and study.origin == "imported" and study.min_correct == 3
    assert StudyItem.objects.get(study=study, external_id="i1").payload == {"item_text": "text of i1"}
    assert Response.objects.filter(study=study, is_correct=True).count() == 4 + 1 + 2
    result = run("compute_agreement", "--study", "ext", "--json")
    assert result["majority_accuracy"] == pytest.approx(1 / 3)  # only i1 has 3+ correct of 5
    assert result["level"] == "nominal" and result["n_items"] == 3


def test_likert_question_column_and_level(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text("item,annotator,value,question\n"
                    "a,r1,5,fluency\na,r2,4,fluency\nb,r1,1,fluency\nb,r2,2,fluency\n"
                    "a,r1,3,style\na,r2,3,style\nb,r1,2,style\nb,r2,2,style\n")
    run("import_annotations", "--study", "lik", "--question", "style", "--scale", "1-5", "--level", "interval",
        str(path))
    study = Study.objects.get(slug="lik")
    assert study.item_kind == "likert" and {q["name"] for q in study.questions} == {"fluency", "style"}
    assert Response.objects.get(study=study, question="fluency", participant__external_id="r1",
                                study_item__external_id="a").value == 5.0
    message, _ = fails("compute_agreement", "--study", "lik")
    assert "several questions" in message
    style = run("compute_agreement", "--study", "lik", "--question", "style", "--json")
    assert style["krippendorff_alpha"] == pytest.approx(1.0) and style["level"] == "interval"
    assert style["n_annotations"] == 4


def test_bad_rows_are_reported_by_line_and_nothing_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("item,annotator,value,correct\n"
                    "a,r1,3,\n"          # line 2: fine
                    "a,r2,7,\n"          # line 3: off the scale
                    ",r3,2,\n"           # line 4: empty item
                    "a,r1,4,\n"          # line 5: r1 rated a twice
                    "b,r1,2,9\n"         # line 6: correct off the scale
                    "c,r1,2,1\nc,r2,2,2\n")  # line 8: conflicting correct value
    message, summary = fails("import_annotations", "--study", "bad", "--question", "q", "--scale", "1-5", str(path))
    assert summary["ok"] is False
    assert f"{path}:3: value '7' is not on the scale 1-5" in message
    assert f"{path}:4: empty item" in message
    assert f"{path}:5: annotator 'r1' rated item 'a' twice (also line 2)" in message
    assert f"{path}:6: correct '9'" in message
    assert f"{path}:8: item 'c' has correct '2' here but '1' on line 7" in message
    assert not Study.objects.exists() and not Participant.objects.exists() and not Response.objects.exists()


@pytest.mark.parametrize(("content", "expected"), [
    (b"item,who,value\na,b,1\n", ":1: missing column(s) annotator"),
    (b"item,annotator,value\na,b,\xff\n", ":2: not valid UTF-8"),
    (b"item,annotator,value\n", "no annotations found"),
])
def test_bad_files(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "file.csv"
    path.write_bytes(content)
    message, _ = fails("import_annotations", "--study", "x", "--question", "q", "--scale", "1-5", str(path))
    assert expected in message
    assert not Study.objects.exists()


def test_bad_scales_and_levels(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_text("item,annotator,value\na,r1,1\n")
    assert "MAX must be greater" in fails("import_annotations", "--study", "x", "--question", "q", "--scale", "5-1",
                                          str(path))[0]
    assert "at least two distinct" in fails("import_annotations", "--study", "x", "--question", "q", "--scale",
                                            "yes", str(path))[0]
    assert "only be nominal" in fails("import_annotations", "--study", "x", "--question", "q", "--scale", "a,b",
                                      "--level", "ordinal", str(path))[0]
    assert "file not found" in fails("import_annotations", "--study", "x", "--question", "q", "--scale", "1-5",
                                     str(tmp_path / "none.csv"))[0]
    assert not Study.objects.exists()


def test_rows_of_a_person_who_asked_for_erasure_are_refused_by_line(tmp_path: Path) -> None:
    from core.erasure import participant_erase
    from tests import factories as f

    pid = "5f0c1e2d3b4a5968778a9b0c"
    f.ParticipantFactory(external_id=pid)
    participant_erase(platform="prolific", external_id=pid, apply=True)
    path = tmp_path / "prolific.csv"
    path.write_text(f"item,annotator,value\ni1,w0,S1-S2\ni1,{pid},S2-S1\ni2,w0,S1-S2\n")
    message, body = fails("import_annotations", "--study", "ext", "--question", "order", "--scale", "S1-S2,S2-S1",
                          str(path))
    assert body["error"]["code"] == "erased_person"
    assert f"{path}:3:" in message and pid not in message
    assert not Study.objects.filter(slug="ext").exists()
