"""Dawid–Skene and MACE (crowd-kit) versus the plain majority on a study whose workers' reliability is known."""
from __future__ import annotations

import io

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


def _positional_import(tmp_path) -> str:
    """STEL-style counts written out as one column per vote: worker-1 … worker-5 are positions, the first n of
    them right on an item with n correct votes (the shape of STEL's published 'votes out of 5')."""
    from django.core.management import call_command

    path = tmp_path / "counts.csv"
    lines = ["item,annotator,value,correct"]
    counts = [5] * 12 + [4] * 10 + [3] * 8 + [2] * 4 + [1] * 3 + [0] * 3
    for index, n_correct in enumerate(counts):
        for position in range(5):
            answer = "S1-S2" if position < n_correct else "S2-S1"
            lines.append(f"i{index},worker-{position + 1},{answer},S1-S2")
    path.write_text("\n".join(lines) + "\n")
    call_command("import_annotations", "--study", "counts", "--question", "order", "--scale", "S1-S2,S2-S1",
                 str(path), stdout=io.StringIO())
    return "counts"


def test_positional_annotator_ids_are_warned_about_in_words_and_get_no_reliability(tmp_path) -> None:
    from annotation.models import Study

    study = Study.objects.get(slug=_positional_import(tmp_path))
    result = aggregation_compare(study=study)
    assert result["annotator_ids"] == "positions"
    assert len(result["warnings"]) == 1 and "worker-1 … worker-5" in result["warnings"][0]
    assert "positions" in result["warnings"][0] and "not people" in result["warnings"][0]
    for method in ("dawid-skene", "mace"):
        # before: worker-5 (right only where all five were) was reported as the least reliable "worker"
        assert result["methods"][method]["least_reliable_workers"] == []
        assert result["methods"][method]["worker_reliability_mean"] is None


def test_a_positional_study_gets_the_pooled_uncertainty_and_says_so(tmp_path) -> None:
    from annotation.models import Study
    from scoring.agreement.uncertainty import MODEL_POOLED, study_uncertainty

    study = Study.objects.get(slug=_positional_import(tmp_path))
    result = study_uncertainty(study=study)
    assert result is not None and result.model == MODEL_POOLED
    assert "positions" in result.facts["warning"] and result.facts["annotators"] == 1
    per_item = result.per_item.set_index("item")["p_correct"]
    assert per_item.nunique() == 6  # one probability per count, 0 … 5


def test_people_on_a_real_study_get_no_warning() -> None:
    study, _ = reliable_minority_study()
    result = aggregation_compare(study=study, methods=("dawid-skene",))
    # p0 … p4 each answered all 60 items: the structure of positions, but platform participants are people
    assert result["annotator_ids"] == "people"
    assert result["methods"]["dawid-skene"]["least_reliable_workers"]
