"""Bad input through the web doors is answered in plain words, never with a command-line flag.

Services word their errors for every door ("Screening questions per batch: 2 asked, …") and name the input in
`details.field`; only a management command turns that field back into its flag (core.commands.cli_message)."""
from __future__ import annotations

import io
import json
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Study
from core.commands import cli_message
from core.errors import ApplicationError
from core.models import Job
from scoring.models import BenchmarkExport, MetricEvaluation, ScoreRun
from tests import factories as f
from tests.scoring.metric_evaluation.test_services import _turk_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def instances():
    corpus = f.CorpusFactory(name="plain")
    for _ in range(6):
        f.TaskInstanceFactory(corpus=corpus)
    return corpus


def _refused(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert "--" not in error["message"] and "--" not in json.dumps(error.get("details")), error
    return error


def test_study_create_api_names_fields_in_plain_words(api, instances):
    base = {"setup": "quadruple", "corpora": ["plain"], "screening_per_batch": 0}
    cases = [
        ({"platform": "mturk", "allow_anonymous": True}, "Allow anonymous cannot be used with platform mturk",
         "allow_anonymous"),
        ({"platform": "prolific", "prolific_study_id": "abc"}, "Prolific study id", "prolific_study_id"),
        ({"redirect_url": "ftp://files.example/x"}, "Redirect URL must be an http:// or https:// URL",
         "redirect_url"),
        ({"screening_per_batch": 2}, "Screening questions per batch: 2 asked, but only 0", "screening_per_batch"),
        ({"platform": "facebook"}, "platform", None),  # refused by the serializer's choices: plain as well
        ({"redirect_url": "javascript:alert(1)"}, "redirect_url", None),
    ]
    for n, (extra, words, field) in enumerate(cases):
        error = _refused(api.post("/api/v1/studies/", {**base, "slug": f"bad-{n}", **extra}, format="json"))
        if field is None:
            assert words in error["details"], error
        else:
            assert words in error["message"] and error["details"]["field"] == field, error
    assert not Study.objects.exists() and not Job.objects.exists()


def test_score_run_and_metric_evaluation_refusals_are_plain(api, shared_data, tmp_path):
    exported = tmp_path / "export.tsv"
    shutil.copy(shared_data / "stel" / "quad_questions_char_contraction.tsv", exported)
    export = BenchmarkExport.objects.create(path=str(exported), format=BenchmarkExport.Format.STEL_TSV, n_rows=100)
    url = reverse("score-run-list")
    twice = _refused(api.post(url, {"export": export.pk, "methods": ["char3gram", "char3gram"]}, format="json"))
    assert twice["message"] == "Methods: char3gram named more than once" and twice["details"] == {"field": "methods"}
    unknown = _refused(api.post(url, {"export": export.pk, "methods": ["char3gram", "bert"]}, format="json"))
    assert "unknown method 'bert'" in unknown["message"]
    compare = _refused(api.post(url, {"export": export.pk, "methods": ["char3gram", "uppercase"],
                                      "compare": ["char3gram", "levenshtein"]}, format="json"))
    assert "two or more of the methods" in compare["message"]
    assert not ScoreRun.objects.exists()

    _turk_study(shared_data, n=6)
    metrics = "/api/v1/metric-evaluations/"
    by = _refused(api.post(metrics, {"study": "turk-likert", "question": "content", "metrics": ["bleu"],
                                     "by": "system"}, format="json"))
    assert "system" in by["message"]
    model = _refused(api.post(metrics, {"study": "turk-likert", "question": "content", "metrics": ["logprob"]},
                              format="json"))
    assert "needs a local model directory" in model["message"] and model["details"]["field"] == "lm_model"
    assert not MetricEvaluation.objects.exists() and not Job.objects.exists()


def test_metric_service_by_is_plain():
    from scoring.metric_evaluation.services import metric_evaluation_prepare

    with pytest.raises(ApplicationError) as refused:  # what the admin form and the command call
        metric_evaluation_prepare(study_slug="any", question="content", metric_names=["bleu"], by="system")
    assert refused.value.message == "By must be 'style' or 'dataset' (or empty), not 'system'"
    assert refused.value.details == {"field": "by"}


def test_admin_study_create_form_answers_in_plain_words(admin_client, instances):
    form = {"slug": "web", "title": "", "setup": "quadruple", "corpora": ["plain"], "instance_status": "candidate",
            "count": 4, "seed": 3, "annotators_per_item": 5, "min_correct": 3, "items_per_batch": 4,
            "screening_per_batch": 2, "max_batches": 2, "time_limit_minutes": 20, "completion_code": "C0DE",
            "redirect_url": "", "estimated_minutes": 5, "target_hourly_pay": "9.50"}
    response = admin_client.post(reverse("admin:annotation_study_create"), form)
    page = response.content.decode()
    assert response.status_code == 200 and "Screening questions per batch: 2 asked, but only 0" in page
    errors = response.context["form"].errors["screening_per_batch"]  # shown beside the field it is about
    assert errors and all("--" not in error for error in errors), errors
    assert not Study.objects.exists() and not Job.objects.exists()


def test_the_command_line_still_names_the_flag(instances):
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("create_study", "--slug", "cli", "--setup", "quadruple", "--corpus", "plain",
                     "--screening-per-batch", "2", stdout=out)
    assert str(refused.value).endswith("(--screening-per-batch)")
    error = json.loads(out.getvalue().strip().splitlines()[-1])["error"]
    assert error["message"].startswith("Screening questions per batch: 2 asked")
    assert error["message"].endswith("(--screening-per-batch)") and error["details"]["field"] == "screening_per_batch"
    with pytest.raises(CommandError, match=r"Time limit \(minutes\) must be at least 1, not 0\. \(--time-limit\)"):
        call_command("create_study", "--slug", "cli", "--setup", "quadruple", "--corpus", "plain",
                     "--screening-per-batch", "0", "--time-limit", "0", stdout=io.StringIO())
    assert not Study.objects.exists()


def test_cli_message_maps_fields_to_flags_only_for_the_commands_options():
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--allow-anonymous", action=argparse.BooleanOptionalAction)
    parser.add_argument("--time-limit", type=int)
    anonymous = ApplicationError("Allow anonymous cannot be used with platform mturk.", field="allow_anonymous")
    assert cli_message(anonymous, parser) == "Allow anonymous cannot be used with platform mturk. (--allow-anonymous)"
    minutes = ApplicationError("Time limit (minutes) must be at least 1.", field="time_limit_minutes")
    assert cli_message(minutes, parser) == minutes.message  # no such option: the message as it is
    assert cli_message(minutes, parser, {"time_limit_minutes": "time_limit"}).endswith(" (--time-limit)")
    assert cli_message(ApplicationError("no field"), parser) == "no field"
