"""The demo Likert study (scoring/demo/) loads, and the meta-evaluation runs on it."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Response, Study, StudyItem
from scoring.metric_evaluation.demo import DEMO_ITEMS
from scoring.metric_evaluation.services import metric_evaluation_run

pytestmark = pytest.mark.django_db


def test_demo_study_loads_and_is_evaluated():
    out = io.StringIO()
    call_command("load_likert_demo", stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary == {"ok": True, "study": "likert-demo", "items": 40, "participants": 3, "responses": 240,
                       "questions": ["content_preservation", "style_change"]}
    study = Study.objects.get(slug="likert-demo")
    payloads = list(StudyItem.objects.filter(study=study).values_list("payload", flat=True))
    assert {p["system"] for p in payloads} == {"copycat", "formalizer", "drifter", "overeager"}
    assert {p["target_style"] for p in payloads} == {"formal", "informal"}
    assert all(p["source"] and p["rewrite"] and p["reference"] for p in payloads)

    evaluation = metric_evaluation_run(study_slug="likert-demo", question="content_preservation",
                                       metric_names=["chrf", "levenshtein"], by="style")
    columns = evaluation.results["columns"]
    assert columns["chrf_src"]["overall"]["n"] == 40
    assert columns["chrf_src"]["system"]["n_systems"] == 4
    # In the demo the copying system keeps the most content (the Mind the Style Gap trap): source-based chrF
    # agrees with that, which is what the admin's system table shows.
    assert columns["chrf_src"]["system"]["human_best"] == ["copycat"]
    assert columns["chrf_src"]["system"]["picks_best"] is True


def test_bad_ratings_file_names_the_line_and_stores_nothing(tmp_path):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,question,value\nfx01-copycat,a,content_preservation,4\n"
                       "fx01-copycat,b,content_preservation,9\n")
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"ratings.csv:3: value '9' is not on the scale 1-5"):
        call_command("load_likert_demo", "--items", str(DEMO_ITEMS), "--ratings", str(ratings), stdout=out)
    assert not Study.objects.exists() and not Response.objects.exists()


def test_demo_takes_the_pauli_presets_question_name(tmp_path):
    """A ratings file that names the Pauli preset's question (style_strength) loads, with the preset's text."""
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,annotator,question,value\nfx01-copycat,a,style_strength,2\n"
                       "fx01-copycat,b,style_strength,1\nfx01-formalizer,a,content_preservation,5\n")
    out = io.StringIO()
    call_command("load_likert_demo", "--ratings", str(ratings), stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["questions"] == ["style_strength", "content_preservation"] and summary["responses"] == 3
    study = Study.objects.get(slug="likert-demo")
    assert {q["name"]: q["text"] for q in study.questions}["style_strength"] == (
        "How strongly does the rewrite show the target style?")
    assert StudyItem.objects.filter(study=study).count() == 40  # every item, rated or not
