"""The overview's numbers against a study with known counts: answers stored of planned (capped at k per item), items
at k, participants by state, arrivals, the implausible-pay and expiring-sessions warnings, jobs no worker serves,
the admin home's studies in progress; and a query count that does not grow with the study."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation.models import Batch, Participant, Response, Study
from annotation.overview.selectors import studies_in_progress, study_overview
from core.models import Job
from tests import factories as f

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def _batch(study: Study, person: Participant, state: str, *, consented: bool = True, seconds: float = 600,
           at: dt.datetime = T0) -> Batch:
    finished = state in (Batch.State.COMPLETED, Batch.State.EXPIRED, Batch.State.DECLINED, Batch.State.SCREENED_OUT)
    return Batch.objects.create(study=study, participant=person, number=1, token=f"t-{person.pk}", state=state,
                                consented_at=at if consented else None, started_at=at if consented else None,
                                finished_at=at + dt.timedelta(seconds=seconds) if finished else None)


def known_study(*, k: int = 3, completed_seconds: float = 600) -> dict[str, Any]:
    """k = 3, four items: item 0 answered by p0–p2 (at k), item 1 by p0–p3 (four: counts 3 towards k), item 2 by p0
    and by the excluded p3 (invalid), item 3 by nobody. p0, p1 finished; p2 expired; p3 declined and was excluded;
    p4 screened out. Five arrivals over two hours."""
    study = f.StudyFactory(annotators_per_item=k, min_correct=2, target_hourly_pay=Decimal("9.00"),
                           estimated_minutes=20, status=Study.Status.ACTIVE)
    items = [f.StudyItemFactory(study=study) for _ in range(4)]
    people = [f.ParticipantFactory(study=study, external_id=f"p{i}") for i in range(5)]
    for i, person in enumerate(people):
        Participant.objects.filter(pk=person.pk).update(created_at=T0 + dt.timedelta(minutes=30 * i))
    for item, who in ((items[0], people[:3]), (items[1], people[:4]), (items[2], people[:1])):
        for person in who:
            f.ResponseFactory(study_item=item, participant=person)
    f.ResponseFactory(study_item=items[2], participant=people[3], is_valid=False)
    Participant.objects.filter(pk=people[3].pk).update(excluded=True)
    Participant.objects.filter(pk=people[4].pk).update(screened_out=True)
    _batch(study, people[0], Batch.State.COMPLETED, seconds=completed_seconds)
    _batch(study, people[1], Batch.State.COMPLETED, seconds=completed_seconds)
    _batch(study, people[2], Batch.State.EXPIRED)
    _batch(study, people[3], Batch.State.DECLINED, consented=False)
    _batch(study, people[4], Batch.State.SCREENED_OUT)
    return {"study": study, "items": items, "people": people}


def test_the_numbers_of_a_study_with_known_counts() -> None:
    study = known_study()["study"]
    overview = study_overview(study=study)
    assert (overview["answers_stored"], overview["answers_planned"]) == (7, 12)  # 3 + 3 + 1 + 0 of 4 × 3
    assert (overview["items_at_k"], overview["items"], overview["items_closed_early"]) == (2, 4, 0)
    assert overview["people"] == {"arrived": 5, "consented": 4, "finished": 2, "excluded": 1, "screened_out": 1}
    assert overview["batches"] == {"completed": 2, "expired": 1, "declined": 1, "screened_out": 1}
    assert overview["arrivals"]["unit"] == "hour"
    assert [n for _, n in overview["arrivals"]["buckets"]] == [2, 2, 1]  # 9:00, 9:30 | 10:00, 10:30 | 11:00
    # ten-minute sessions for a 20-minute estimate at 9.00/h: 18.00/h, plausible; no expiry warning (1 of 3)
    assert overview["pay"]["effective_hourly_pay"] == 18.0 and overview["pay_implausible"] is False
    assert overview["warnings"] == []


def test_implausible_pay_is_a_warning_not_a_plain_number() -> None:
    # sessions of 5.49 seconds for a 20-minute estimate: the "1967.92 an hour" a simulated crowd produces
    study = known_study(completed_seconds=5.49)["study"]
    overview = study_overview(study=study)
    assert overview["pay"]["effective_hourly_pay"] > 1900 and overview["pay_implausible"] is True
    [warning] = overview["warnings"]
    assert "is implausible" in warning.text and "median of 0.09 minutes against the 20 estimated" in warning.text


def test_sessions_that_mostly_expire_are_a_warning() -> None:
    study = f.StudyFactory(first_answer_grace_seconds=60, batch_time_limit_minutes=5)
    for i, state in enumerate([Batch.State.EXPIRED] * 3 + [Batch.State.COMPLETED]):
        _batch(study, f.ParticipantFactory(study=study, external_id=f"x{i}"), state)
    [warning] = study_overview(study=study)["warnings"]
    assert warning.text.startswith("3 of 4 ended sessions expired") and "grace (60 s)" in warning.text
    assert "time limit (5 minutes per batch)" in warning.text


def test_a_job_of_the_study_that_no_worker_serves_is_a_warning(settings) -> None:  # noqa: ANN001
    settings.CELERY_TASK_ALWAYS_EAGER = False
    study = f.StudyFactory()
    cache.set("job-waiting:workers:default", 0)  # what core.job_waiting learnt from the workers: none serves it
    try:
        job = Job.objects.create(kind="agreement_compute", params={"study": study.slug})
        Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - dt.timedelta(minutes=2))
        Job.objects.create(kind="agreement_compute", params={"study": "another-study"})
        [warning] = study_overview(study=study)["warnings"]
    finally:
        cache.delete("job-waiting:workers:default")
    assert warning.text.startswith(f"Job #{job.pk}: ") and "celery -A config worker" in warning.text
    assert warning.url == f"/admin/core/job/{job.pk}/change/"


def test_the_query_count_does_not_grow_with_the_study(django_assert_num_queries) -> None:  # noqa: ANN001
    small = known_study()["study"]
    with django_assert_num_queries(6):
        study_overview(study=small)
    big = known_study()["study"]
    for i in range(30):
        person = f.ParticipantFactory(study=big, external_id=f"more{i}")
        Response.objects.create(study=big, participant=person, study_item=f.StudyItemFactory(study=big),
                                answer="S2-S1", answered_at=timezone.now())
    with django_assert_num_queries(6):
        overview = study_overview(study=big)
    assert overview["people"]["arrived"] == 35 and overview["items"] == 34


def test_studies_in_progress_open_first_with_answers_of_planned(django_assert_num_queries) -> None:  # noqa: ANN001
    active = known_study()["study"]
    draft = f.StudyFactory(status=Study.Status.DRAFT, annotators_per_item=5)
    f.StudyItemFactory(study=draft)
    f.StudyFactory(status=Study.Status.CLOSED)
    with django_assert_num_queries(2):
        rows = studies_in_progress()
    # the same count as the overview's: item 1's fourth answer does not count past k
    assert [(r["study"], r["stored"], r["planned"]) for r in rows] == [(active, 7, 12), (draft, 0, 5)]
