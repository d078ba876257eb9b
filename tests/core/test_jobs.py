import pytest

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
