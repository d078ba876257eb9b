"""Dawid–Skene and MACE (crowd-kit) versus the plain majority on a study whose workers' reliability is known."""
from __future__ import annotations

import numpy as np
import pytest

from core.jobs import job_create
from core.models import Job
from scoring.agreement.aggregation import aggregation_compare
from scoring.celery_tasks.agreement import aggregation_task
from tests.factories import annotated_study

pytestmark = pytest.mark.django_db


def reliable_minority_study():
    """p0 and p1 are always right; p2–p4 answer at random. Where the random three all miss, the majority rejects
    a correct-by-the-experts instance; a model that learns who is reliable should validate it."""
    rng = np.random.default_rng(4)

    def answers(right: str) -> list[list[str]]:
        return [[right, right, *[rng.choice(["S1-S2", "S2-S1"]) for _ in range(3)]] for _ in range(30)]

    study, first = annotated_study(answers=answers("S2-S1"), correct_order="S2-S1")
    _, second = annotated_study(answers=answers("S1-S2"), correct_order="S1-S2", study=study, start=10_000)
    return study, first + second


@pytest.mark.slow  # seconds: out of `make test-fast`
def test_models_find_the_reliable_workers_and_change_decisions() -> None:
    study, items = reliable_minority_study()
    result = aggregation_compare(study=study)
    assert result["n_items"] == 60 and result["n_responses"] == 300
    # majority: validated when at least 3 of 5 are right, i.e. when at least one noisy worker is right
    expected_majority = sum(1 for item in items
                            if item.responses.filter(answer=item.correct_answer).count() >= 3)
    assert result["majority_validated"] == expected_majority
    for method in ("dawid-skene", "mace"):
        stats = result["methods"][method]
        assert stats["changed_vs_majority"] == stats["now_validated"] + stats["now_rejected"]
        assert stats["validated"] == result["majority_validated"] + stats["now_validated"] - stats["now_rejected"]
        reliability = dict(stats["least_reliable_workers"])
        people = {p.external_id: str(p.pk) for p in study.participants.all()}
        # the two experts are estimated more reliable than every noisy worker
        noisy = [reliability[people[name]] for name in ("p2", "p3", "p4")]
        experts = [reliability[people[name]] for name in ("p0", "p1")]
        assert min(experts) > max(noisy), (method, experts, noisy)
    # Dawid–Skene trusts the experts: every instance they got right is validated, which the majority did not do
    ds = result["methods"]["dawid-skene"]
    assert ds["validated"] == 60 and ds["now_validated"] == 60 - expected_majority > 0


def test_aggregation_task_stores_its_result_on_the_job() -> None:
    study, _ = reliable_minority_study()
    params = {"study": study.slug, "methods": ["dawid-skene"]}
    job = job_create(kind="crowd_aggregation", params=params)
    aggregation_task(job.pk)  # the task body, run in-process; it reads its parameters from the job's row
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1
    assert job.result["methods"]["dawid-skene"]["validated"] == 60
    aggregation_task(job.pk, params)  # a redelivered message from before (params in it) of a finished job: nothing
    job.refresh_from_db()
    assert job.attempts == 1


def test_aggregation_without_correct_answers_fails_clearly() -> None:
    study, _ = annotated_study(answers=[["S2-S1"] * 5])
    study.items.update(correct_answer="")
    params = {"study": study.slug}
    job = job_create(kind="crowd_aggregation", params=params)
    with pytest.raises(Exception, match="no complete items with a correct answer"):
        aggregation_task(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "no complete items" in job.error
