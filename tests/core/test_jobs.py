import datetime as dt

import pytest
from django.utils import timezone

from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, job_progress, job_running
from core.models import Job

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)  # progress is written outside transactions (see core/jobs.py)
def test_a_finished_job_keeps_the_progress_written_while_it_ran() -> None:
    job = job_create(kind="test", params={})
    with job_running(job.pk) as running:
        job_progress(job.pk, 40, 50)  # written by another statement than the running job object
        running.result = {"answer": 42}
    job.refresh_from_db()
    assert (job.status, job.progress_done, job.progress_total, job.percent) == ("done", 50, 50, 100.0)
    assert job.result == {"answer": 42} and job.attempts == 1


def test_a_failed_job_records_the_error_and_a_done_job_is_not_run_again() -> None:
    job = job_create(kind="test", params={})
    with pytest.raises(ApplicationError), job_running(job.pk):
        raise ApplicationError("input.txt, line 3: empty text")
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error == "input.txt, line 3: empty text"
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    with job_running(job.pk) as again:
        assert again is None  # a redelivered task finds the work done


def test_a_job_is_queued_by_its_tasks_registered_name_and_an_unknown_name_is_refused_at_once() -> None:
    job = job_create(kind="test", params={})
    job_enqueue(job=job, task="tasks.corpus_import", queue="gpu")  # sent on commit, which this test never reaches
    job.refresh_from_db()
    assert (job.task_name, job.task_args, job.queue) == ("tasks.corpus_import", [], "gpu")
    with pytest.raises(LookupError, match="no Celery task is registered as 'tasks.corpus_imprt'"):
        job_enqueue(job=job, task="tasks.corpus_imprt")


def test_a_result_that_asks_for_a_person_ends_attention_which_is_final_and_left_by_the_reaper() -> None:
    from core.job_health import jobs_reap_stale
    from core.job_links import job_attention
    from core.views import job_body

    job = job_create(kind="platform_bonus", params={})
    with job_running(job.pk) as running:
        running.result = {"attention": {"reason": "2 bonus row(s) have an unknown outcome."}}
    job.refresh_from_db()
    assert job.status == Job.Status.ATTENTION and job.percent == 100.0 and job.finished
    assert job_attention(job) == {"reason": "2 bonus row(s) have an unknown outcome.", "url": "", "label": ""}
    assert job_body(job)["attention"]["reason"].startswith("2 bonus row(s)")
    with job_running(job.pk) as again:  # a redelivered message finds it finished
        assert again is None
    jobs_reap_stale(now=timezone.now() + dt.timedelta(days=3))
    job.refresh_from_db()
    assert job.status == Job.Status.ATTENTION
    with job_running(job_create(kind="k", params={}).pk) as plain:
        plain.result = {"attention": {}}  # no reason: nothing to ask
    assert Job.objects.latest("pk").status == Job.Status.DONE
