"""Ratings of rewrites collected elsewhere, in with their texts (items + long ratings, or one wide CSV in the shape of
Pauli et al.'s release): a Likert study on which agreement and evaluate_metrics (--by dataset / --by style) work;
bad lines named by file, line and column, and nothing stored."""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation.models import Participant, Response, Study, StudyItem
from core.errors import ApplicationError
from scoring.agreement.rating_imports import RatingsImport, WideMapping, items_read, ratings_import

pytestmark = pytest.mark.django_db

DEMO = Path(settings.BASE_DIR) / "scoring" / "demo"


def _command(name: str, *args: str) -> dict[str, Any]:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def _nothing_stored() -> None:
    assert not Study.objects.exists() and not StudyItem.objects.exists()
    assert not Participant.objects.exists() and not Response.objects.exists()


def _demo_items(tmp_path: Path) -> Path:
    """The demo items with a dataset per target style (two 'datasets')."""
    out = tmp_path / "items.jsonl"
    rows = [json.loads(line) for line in (DEMO / "likert_demo_items.jsonl").read_text().splitlines() if line]
    out.write_text("".join(json.dumps({**row, "dataset": f"gyafc-{row['target_style']}"}) + "\n" for row in rows))
    return out


def _demo_ratings(tmp_path: Path) -> Path:
    """The demo ratings with the Pauli preset's question name `style_strength`."""
    out = tmp_path / "ratings.csv"
    out.write_text((DEMO / "likert_demo_ratings.csv").read_text().replace(",style_change,", ",style_strength,"))
    return out


def test_items_and_long_ratings_make_a_likert_study_that_agreement_and_metrics_read(tmp_path, admin_client):
    summary = _command("import_annotations", "--study", "ext", "--items", str(_demo_items(tmp_path)), "--scale",
                       "1-5", "--level", "ordinal", str(_demo_ratings(tmp_path)))
    assert summary["ok"] and summary["items_created"] == 40 and summary["responses"] == 240
    assert summary["questions"] == ["content_preservation", "style_strength"]
    study = Study.objects.get(slug="ext")
    assert study.item_kind == "likert" and study.origin == Study.Origin.IMPORTED
    # The questions take the preset's text and labels (Pauli et al.'s style_strength scale).
    spec = next(q for q in study.questions if q["name"] == "style_strength")
    assert spec["text"] == "How strongly does the rewrite show the target style?"
    assert spec["labels"]["5"] == "Completely"
    item = StudyItem.objects.get(study=study, external_id="fx01-drifter")
    assert item.payload["rewrite"] == "Please confirm your attendance at the annual conference."
    assert item.payload["dataset"] == "gyafc-formal" and item.payload["system"] == "drifter"

    # Agreement equals krippendorff on the same ratings (units = items, coders = raters).
    table: dict[str, dict[str, float]] = {}
    with (DEMO / "likert_demo_ratings.csv").open() as handle:
        for row in csv.DictReader(handle):
            if row["question"] == "content_preservation":
                table.setdefault(row["annotator"], {})[row["item"]] = float(row["value"])
    items = sorted({i for r in table.values() for i in r})
    data = np.array([[table[a].get(i, np.nan) for i in items] for a in sorted(table)])
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    agreement = _command("compute_agreement", "--study", "ext", "--question", "content_preservation",
                         "--resamples", "0", "--json")
    assert agreement["krippendorff_alpha"] == pytest.approx(expected, abs=1e-9)

    by_dataset = _command("evaluate_metrics", "--study", "ext", "--question", "content_preservation",
                          "--metrics", "chrf,bleu_char", "--by", "dataset")
    assert by_dataset["n_items"] == 40 and by_dataset["n_ratings"] == 120
    assert set(by_dataset["correlations"]["chrf_src"]["by_dataset"]) == {"gyafc-formal", "gyafc-informal"}
    formal = sum('"formal"' in line for line in (DEMO / "likert_demo_items.jsonl").read_text().splitlines())
    assert by_dataset["correlations"]["chrf_src"]["by_dataset"]["gyafc-formal"]["n"] == formal == 24
    page = admin_client.get(f"/admin/scoring/metricevaluation/{by_dataset['evaluation']}/change/")
    assert b"gyafc-informal \xcf\x81 (p, n)" in page.content  # the admin's table per dataset
    by_style = _command("evaluate_metrics", "--study", "ext", "--question", "style_strength", "--metrics", "chrf",
                        "--by", "style")
    assert set(by_style["correlations"]["chrf_src"]["by_style"]) == {"formal", "informal"}
    # The responses export reads it as any study's, raters under pseudonyms.
    exported = _command("export_responses", "--study", "ext", "--out", str(tmp_path / "responses.csv"))
    assert exported["rows"] == 240 and exported["participant_ids"] == "pseudonyms"
    assert "rater-a" not in (tmp_path / "responses.csv").read_text()


def _wide_file(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "lai3.csv"
    header = "sample_id,input,output,reference,style_to,system,c-1,c-2,c-3,s-1,s-2,s-3"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


WIDE_ROWS = [
    "1,gonna be late lol,I will be late.,I am going to be late.,formal,sysA,5,4,5,4,5,4",
    "1,gonna be late lol,gonna be late,I am going to be late.,formal,sysB,5,5,4,1,2,1",
    "2,thx for the help,Thank you for your help.,Thank you for the help.,formal,sysA,5,5,5,5,4,5",
    "2,thx for the help,Please advise on the budget.,Thank you for the help.,formal,sysB,1,2,1,4,3,4",
    "3,can u send it asap,Could you send it soon?,Could you send it as soon as possible?,formal,sysA,4,4,5,5,5,4",
    "3,can u send it asap,can u send it asap,Could you send it as soon as possible?,formal,sysB,5,4,,1,1,",
]


def test_a_wide_csv_in_pauli_et_als_shape_imports_with_the_default_mapping(tmp_path):
    summary = _command("import_annotations", "--study", "lai", "--wide", "--dataset", "Lai3", "--scale", "1-5",
                       str(_wide_file(tmp_path, WIDE_ROWS)))
    assert summary["items_created"] == 6 and summary["responses"] == 34  # two empty cells are no rating
    assert summary["questions"] == ["content_preservation", "style_strength"] and summary["datasets"] == ["Lai3"]
    payloads = {i.external_id: i.payload for i in StudyItem.objects.filter(study__slug="lai")}
    assert payloads["lai3-3"] == {"source": "gonna be late lol", "rewrite": "gonna be late", "system": "sysB",
                                  "reference": "I am going to be late.", "target_style": "formal",
                                  "dataset": "Lai3"}
    # Rater columns c-1 and s-1 are the same rater.
    assert set(Participant.objects.filter(study__slug="lai").values_list("external_id", flat=True)) == {
        "rater-1", "rater-2", "rater-3"}
    result = _command("evaluate_metrics", "--study", "lai", "--question", "content_preservation", "--metrics",
                      "levenshtein", "--by", "dataset")
    assert result["correlations"]["levenshtein_src"]["by_dataset"]["Lai3"]["n"] == 6


def test_a_wide_csv_with_its_own_column_names_takes_a_mapping(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("key,orig,new,meaning_a,meaning_b\nk1,hello there,hi there,4,5\nk2,see you,bye,2,1\n")
    summary = _command("import_annotations", "--study", "own", "--wide", "--columns", "id=key,source=orig,rewrite=new",
                       "--raters", "meaning=content_preservation", "--scale", "1-5", str(path))
    assert summary["items_created"] == 2 and summary["responses"] == 4
    item = StudyItem.objects.get(study__slug="own", external_id="k2")
    assert item.payload == {"source": "see you", "rewrite": "bye"}


# Rows in the shape of Pauli et al.'s published files (data/syntest_anno2.csv: `AnswerA_n` style strength,
# `AnswerB_n` content preservation, one column per rater); the first two rows' texts end in a space as published.
PAULI_HEADER = ("sample_id,input,output,intention,source,style_to,reference,quest_nr,AnswerA_1,AnswerA_2,AnswerA_3,"
                "AnswerB_1,AnswerB_2,AnswerB_3,annoB_mean,annoA_mean")
PAULI_ROWS = [
    "627.0,it is a left-wing loser who spews the usual talking point ,The person is just repeating the usual talking "
    "point from the left-wing,style,Log3,detoxified,it is a left-wing person who spews the usual talking point,7,5,5,4,"
    "5,5,3,4.33,4.67",
    "627.0,it is a left-wing loser who spews the usual talking point ,it is a right-wing person who spews the usual "
    "talking point ,substitution,Log3,detoxified,it is a left-wing person who spews the usual talking point,8,2,2,1,2,"
    "1,1,1.33,1.67",
    '213.0,Not to mention idiots like Pelosi,"Let alone people, such as Pelosi \u2014 really.",style,Log3,detoxified,'
    "Not to mention individuals like Pelosi.,1,4,5,4,4,5,2,3.67,4.33",
]


def test_texts_keep_their_outer_spaces_so_bleu_char_scores_the_published_strings(tmp_path):
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    from scoring.metric_evaluation.overlap import BleuCharMetric
    from scoring.metric_evaluation.selectors import likert_study_get, rated_items_select

    path = tmp_path / "syntest_anno2.csv"
    path.write_text("\n".join([PAULI_HEADER, *PAULI_ROWS]) + "\n", encoding="utf-8")
    summary = _command("import_annotations", "--study", "pauli", "--wide", "--raters",
                       "AnswerA=style_strength,AnswerB=content_preservation", "--scale", "1-5", str(path))
    assert summary["items_created"] == 3 and summary["responses"] == 18
    with path.open(encoding="utf-8", newline="") as handle:
        published = list(csv.DictReader(handle))
    stored = [i.payload for i in StudyItem.objects.filter(study__slug="pauli").order_by("position")]
    assert [(p["source"], p["rewrite"], p["reference"]) for p in stored] == [
        (r["input"], r["output"], r["reference"]) for r in published]
    assert stored[0]["source"].endswith("point ") and stored[2]["rewrite"].endswith("\u2014 really.")

    # bleu_char on the stored items equals NLTK's sentence_bleu on the file's strings, called as Pauli et al.'s code
    # calls it (run_bleu_meteor_bert_score_on_datapy: sentence_bleu([output], input, method1)).
    items = [r.item for r in rated_items_select(study=likert_study_get(slug="pauli"), question="content_preservation")]
    scores = BleuCharMetric().score(items, options={})
    method1 = SmoothingFunction().method1
    assert scores["bleu_char_src"] == [sentence_bleu([r["output"]], r["input"], smoothing_function=method1)
                                       for r in published]
    assert scores["bleu_char_ref"] == [sentence_bleu([r["output"]], r["reference"], smoothing_function=method1)
                                       for r in published]
    # The trailing spaces count: trimmed strings would score the second row differently.
    trimmed = sentence_bleu([published[1]["output"].strip()], published[1]["input"].strip(),
                            smoothing_function=method1)
    assert scores["bleu_char_src"][1] != pytest.approx(trimmed, abs=1e-6)

    # An items file keeps its texts' spaces too; a text of spaces only is empty (named, nothing stored).
    items_file = tmp_path / "items.jsonl"
    items_file.write_text('{"id": "a", "source": " so ", "rewrite": "so.  ", "system": " sysA "}\n')
    assert items_read(path=items_file) == {"a": {"source": " so ", "rewrite": "so.  ", "system": "sysA"}}
    blank = tmp_path / "blank.csv"
    blank.write_text(PAULI_HEADER + "\n" + PAULI_ROWS[2].replace("Not to mention idiots like Pelosi", "   ") + "\n")
    with pytest.raises(CommandError, match="blank.csv:2: column 'input': empty"):
        _command("import_annotations", "--study", "blank", "--wide", "--raters",
                 "AnswerA=style_strength,AnswerB=content_preservation", "--scale", "1-5", str(blank))
    assert not Study.objects.filter(slug="blank").exists()


def test_bad_lines_are_named_by_file_line_and_column_and_nothing_is_stored(tmp_path):
    rows = list(WIDE_ROWS)
    rows[1] = rows[1].replace(",5,5,4,1,2,1", ",5,7,4,1,2,1")
    rows[3] = "2,,Please advise on the budget.,x,formal,sysB,1,2,1,4,3,4"
    with pytest.raises(CommandError) as error:
        _command("import_annotations", "--study", "lai", "--wide", "--scale", "1-5", str(_wide_file(tmp_path, rows)))
    message = str(error.value)
    assert "lai3.csv:3: column 'c-2': value '7' is not on the scale 1-5" in message
    assert "lai3.csv:5: column 'input': empty" in message
    _nothing_stored()

    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "source": "s", "rewrite": "r"}\n{"id": "b", "source": "s2", "rewrite": ""}\n')
    with pytest.raises(ApplicationError, match=r"items.jsonl:2: column 'rewrite': empty"):
        items_read(path=items)
    items.write_text('{"id": "a", "source": "s", "rewrite": "r"}\n')
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,question,value\na,r1,content_preservation,4\nzz,r1,content_preservation,3\n"
                       "a,r2,content_preservation,six\n")
    with pytest.raises(ApplicationError) as error:
        ratings_import(request=RatingsImport(study_slug="x", scale="1-5", ratings_path=ratings, items_path=items))
    assert "ratings.csv:4: value 'six' is not on the scale 1-5" in str(error.value)
    ratings.write_text("item,annotator,question,value\na,r1,content_preservation,4\nzz,r1,content_preservation,3\n")
    with pytest.raises(ApplicationError, match=r"ratings.csv:3: column 'item': 'zz' is not an item of .*items.jsonl"):
        ratings_import(request=RatingsImport(study_slug="x", scale="1-5", ratings_path=ratings, items_path=items))
    _nothing_stored()


def test_a_later_import_that_changes_an_items_texts_is_refused_and_stores_nothing(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text("id,source,rewrite\na,hello,hi\n")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,question,value\na,r1,content_preservation,4\n")
    ratings_import(request=RatingsImport(study_slug="x", scale="1-5", ratings_path=ratings, items_path=items))
    items.write_text("id,source,rewrite\na,hello,hey\n")
    ratings.write_text("item,annotator,question,value\na,r2,content_preservation,5\n")
    with pytest.raises(ApplicationError, match="imported before with other texts"):
        ratings_import(request=RatingsImport(study_slug="x", scale="1-5", ratings_path=ratings, items_path=items))
    assert Response.objects.count() == 1 and Participant.objects.count() == 1


def test_the_wide_mapping_parses_and_refuses_unknown_fields():
    mapping = WideMapping.parse(columns="source=src, rewrite=out", raters="m=meaning")
    assert (mapping.source, mapping.rewrite, mapping.reference, mapping.raters) == ("src", "out", "reference",
                                                                                   {"m": "meaning"})
    with pytest.raises(ApplicationError, match="'colour' is not one of"):
        WideMapping.parse(columns="colour=red")
    with pytest.raises(ApplicationError, match="is not NAME=VALUE"):
        WideMapping.parse(raters="c")


# --- the API's and the admin's doors -------------------------------------------------------------------------


def test_the_api_imports_items_and_ratings_and_names_bad_lines_by_the_uploaded_file(api, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.helpers import assert_api_error

    items = SimpleUploadedFile("items.jsonl", _demo_items(tmp_path).read_bytes())
    ratings = SimpleUploadedFile("ratings.csv", _demo_ratings(tmp_path).read_bytes())
    response = api.post("/api/v1/annotation-imports/", {"study": "api-ext", "scale": "1-5", "level": "ordinal",
                                                        "items": items, "ratings": ratings}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["responses"] == 240 and response.json()["questions"] == ["content_preservation",
                                                                                     "style_strength"]
    shown = Response.objects.filter(study__slug="api-ext").values_list("shown", flat=True).first()
    assert shown == {"imported_from": "ratings.csv", "line": 2}  # the upload's name, not a temporary path
    bad = _wide_file(tmp_path, [WIDE_ROWS[0].replace(",5,4,5,4,5,4", ",5,4,5,4,9,4")])
    response = api.post("/api/v1/annotation-imports/", {"study": "api-wide", "scale": "1-5", "wide": "true",
                                                        "ratings": SimpleUploadedFile("lai3.csv", bad.read_bytes())},
                        format="multipart")
    error = assert_api_error(response, code="bad_rows", status=400)
    assert error["message"].endswith("lai3.csv:2: column 's-2': value '9' is not on the scale 1-5")
    assert "ratings-import-" not in error["message"]  # the upload's name, not the temporary folder
    assert not Study.objects.filter(slug="api-wide").exists()


def test_the_api_refuses_an_anonymous_caller(anonymous_api, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = anonymous_api.post("/api/v1/annotation-imports/", {
        "study": "x", "scale": "1-5", "wide": "true",
        "ratings": SimpleUploadedFile("w.csv", _wide_file(tmp_path, WIDE_ROWS).read_bytes())}, format="multipart")
    assert response.status_code in (401, 403)
    _nothing_stored()


def test_the_admin_upload_imports_a_wide_file_and_shows_bad_lines(admin_client, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = "/admin/scoring/agreementrun/import/"
    assert b"Import ratings of rewrites" in admin_client.get(url).content
    bad = _wide_file(tmp_path, [WIDE_ROWS[0].replace("gonna be late lol", "")])
    page = admin_client.post(url, {"study": "adm", "scale": "1-5", "wide": "on",
                                   "ratings": SimpleUploadedFile("lai3.csv", bad.read_bytes())})
    assert page.status_code == 200 and b"lai3.csv:2: column &#x27;input&#x27;: empty" in page.content
    _nothing_stored()
    good = _wide_file(tmp_path, WIDE_ROWS)
    done = admin_client.post(url, {"study": "adm", "scale": "1-5", "wide": "on", "dataset": "Lai3",
                                   "ratings": SimpleUploadedFile("lai3.csv", good.read_bytes())})
    assert done.status_code == 302 and done["Location"].endswith("?study=adm")
    assert Response.objects.filter(study__slug="adm").count() == 34
