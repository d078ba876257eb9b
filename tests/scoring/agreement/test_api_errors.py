"""Forms and API calls answer bad input in plain words, store nothing and queue no job, and the
web doors cannot probe server files. Each case was an HTTP 500, a traceback or a failed job row before."""
from __future__ import annotations

import io

import pytest
from django.contrib.messages import get_messages
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.models import Job
from scoring.agreement.stats.summary import agreement_compute
from scoring.models import AgreementRun, FilterRun
from tests import factories as f
from tests.scoring.agreement.test_runs import FLEISS_1971, write_long_csv


def _fleiss_1971(tmp_path) -> str:
    rows = [(f"patient-{s}", f"psychiatrist-{r}", c + 1) for s, counts in enumerate(FLEISS_1971)
            for r, c in enumerate(c for c, n in enumerate(counts) for _ in range(n))]
    call_command("import_annotations", "--study", "fleiss-1971", "--question", "diagnosis", "--scale", "1-5",
                 "--level", "nominal", str(write_long_csv(tmp_path / "f.csv", rows)), stdout=io.StringIO())
    return "fleiss-1971"


def _no_plain_words(message: str) -> None:
    assert "--" not in message and "Traceback" not in message, message


@pytest.mark.django_db
def test_agreement_on_a_study_without_items_is_refused_before_a_job_exists(api):
    study = f.StudyFactory(slug="empty")
    response = api.post("/api/v1/agreement-runs/", {"study": "empty"}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "no_items" and "no items" in error["message"]
    assert not Job.objects.exists() and not AgreementRun.objects.exists()
    # the statistics themselves no longer crash on an empty study (scoring/agreement/selectors.py read-only array)
    summary, per_item = agreement_compute(study=study, resamples=10)
    assert per_item.empty and summary["n_items"] == 0


@pytest.mark.django_db
def test_compute_agreement_command_on_an_empty_study_exits_with_a_message():
    f.StudyFactory(slug="empty")
    with pytest.raises(CommandError, match="no items"):
        call_command("compute_agreement", "--study", "empty", stdout=io.StringIO())


@pytest.mark.django_db
def test_admin_agreement_form_on_an_empty_study_shows_the_reason(admin_client):
    f.StudyFactory(slug="empty")
    response = admin_client.post(reverse("admin:scoring_agreement_start"), {"study": "empty", "seed": 0,
                                                                            "resamples": 10})
    assert response.status_code == 200 and b"has no items yet" in response.content
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_filter_on_a_study_without_correct_answers_is_refused(api, tmp_path):
    slug = _fleiss_1971(tmp_path)
    response = api.post("/api/v1/filter-runs/", {"study": slug}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "nothing_to_filter" and "correct answer" in error["message"]
    _no_plain_words(error["message"])
    assert not Job.objects.filter(kind="filter_instances").exists() and not FilterRun.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("door", ["api", "admin"])
def test_filter_with_min_correct_above_k_is_refused_in_plain_words(api, admin_client, door):
    study, _ = f.annotated_study(answers=[["S2-S1"] * 5, ["S2-S1"] * 5])
    study.annotators_per_item = 5
    study.save()
    run = f.AgreementRunFactory(study=study)
    if door == "api":
        response = api.post("/api/v1/filter-runs/", {"study": study.slug, "min_correct": 9}, format="json")
        assert response.status_code == 400
        message = response.json()["error"]["message"]
    else:
        response = admin_client.post(reverse("admin:scoring_agreement_filter", args=[run.pk]), {"min_correct": 9})
        assert response.status_code == 302 and response.url.endswith(f"/{run.pk}/dashboard/")
        message = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert "between 1 and the study's annotators per item (5)" in message
    _no_plain_words(message)
    assert not Job.objects.exists() and not FilterRun.objects.exists()


@pytest.mark.django_db
def test_agreement_form_offers_the_studies_questions_and_refuses_another(admin_client):
    f.StudyFactory(slug="lik", item_kind="likert", questions=[{"name": "style", "min": 1, "max": 5},
                                                              {"name": "fluency", "min": 1, "max": 5}])
    f.StudyFactory(slug="other", item_kind="likert", questions=[{"name": "meaning", "min": 1, "max": 5}])
    page = admin_client.get(reverse("admin:scoring_agreement_start"), {"study": "lik"}).content.decode()
    assert '<option value="fluency">' in page and '<option value="meaning">' not in page  # the chosen study's only
    response = admin_client.post(reverse("admin:scoring_agreement_start"),
                                 {"study": "lik", "question": "meaning", "seed": 0, "resamples": 10})
    assert response.status_code == 200 and b'name="question"' in response.content and not Job.objects.exists()


@pytest.mark.django_db
def test_score_runs_cannot_probe_server_files(api):
    """A file outside the data folders gets the same answer whether it exists or not."""
    answers = []
    for path in ["/etc/shadow", "/etc/passwd", "/no/such/file.tsv"]:
        response = api.post("/api/v1/score-runs/", {"benchmark_paths": [path], "methods": ["char3gram"]},
                            format="json")
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "path_not_allowed"
        answers.append(error["message"].replace(path, "PATH"))
    assert len(set(answers)) == 1 and "missing column" not in answers[0] and "does not exist" not in answers[0]
    model = api.post("/api/v1/score-runs/", {"benchmark_paths": ["/etc/passwd"], "methods": ["hf:/etc"]},
                     format="json")
    assert model.status_code == 400 and not Job.objects.exists()


@pytest.mark.django_db
def test_the_command_line_may_read_any_path(tmp_path, settings):
    """The CLI is run by whoever runs the server: not limited to the data folders."""
    settings.STYLECROWD_DATA_DIRS = []
    bad = tmp_path / "bad.tsv"
    bad.write_text("nothing\n")
    with pytest.raises(CommandError) as error:
        call_command("score_stel", str(bad), "--methods", "char3gram", stdout=io.StringIO())
    assert "outside the data folders" not in str(error.value)


@pytest.mark.django_db
def test_a_failed_job_shows_one_line_and_logs_the_traceback(caplog, admin_client):
    from core.jobs import job_running

    job = Job.objects.create(kind="agreement_compute")
    with pytest.raises(ValueError), job_running(job.pk):
        raise ValueError("assignment destination is read-only\nmore detail")
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error == "ValueError: assignment destination is read-only"
    assert "Traceback" in caplog.text
    page = admin_client.get(reverse("admin:core_job_change", args=[job.pk])).content.decode()
    assert "assignment destination is read-only" in page and "Traceback" not in page
    assert 'name="_save"' not in page and "Change job" not in page
