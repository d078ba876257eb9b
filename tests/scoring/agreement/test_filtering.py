"""filter_instances: the majority rule on instances, balancing, immutable FilterRun records; property tests."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.agreement.filtering import balance_validated, instances_filter
from scoring.agreement.stats.votes import decide
from scoring.models import FilterRun
from tasks.models import TaskInstance
from tests.factories import annotated_study


def run_command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def votes(n_correct: int, k: int = 5) -> list[str]:
    return ["S2-S1"] * n_correct + ["S1-S2"] * (k - n_correct)


@pytest.mark.django_db
def test_filter_marks_validated_rejected_and_leaves_incomplete() -> None:
    study, items = annotated_study(answers=[votes(5), votes(3), votes(2), votes(0), ["S2-S1"] * 4])
    summary = run_command("filter_instances", "--study", study.slug)
    status = {item.pk: TaskInstance.objects.get(pk=item.instance_id).status for item in items}
    assert [status[i.pk] for i in items] == ["validated", "validated", "rejected", "rejected", "candidate"]
    assert summary["validated"] == 2 and summary["rejected"] == 2 and summary["incomplete"] == 1
    run = FilterRun.objects.get(pk=summary["filter_run"])
    assert run.counts_after == {"formality": {"validated": 2, "rejected": 2}}
    assert run.counts_before["decision"]["formality"] == {"validated": 2, "rejected": 2, "incomplete": 1}
    assert run.counts_before["status"]["formality"] == {"candidate": 5}
    assert run.statistics["majority_accuracy"] == pytest.approx(0.5)
    assert run.statistics["fleiss_kappa"] is not None and run.statistics["krippendorff_alpha"] is not None
    assert "3 of the first 5" in run.statistics["rule"]
    assert any("incomplete" in note for note in summary["notes"])


@pytest.mark.django_db
def test_stricter_rule_rejects_more() -> None:
    study, items = annotated_study(answers=[votes(5), votes(4), votes(3)])
    summary = run_command("filter_instances", "--study", study.slug, "--min-correct", "4")
    assert summary["validated"] == 2 and summary["rejected"] == 1 and summary["min_correct"] == 4
    assert TaskInstance.objects.get(pk=items[2].instance_id).status == "rejected"


@pytest.mark.django_db
def test_filter_run_is_immutable() -> None:
    study, _ = annotated_study(answers=[votes(5)])
    run = instances_filter(study=study)
    run.n_validated = 99
    with pytest.raises(ValueError, match="immutable"):
        run.save()
    assert FilterRun.objects.get(pk=run.pk).n_validated == 1


@pytest.mark.django_db
def test_balance_is_seeded_and_equalizes_components() -> None:
    study, formal = annotated_study(answers=[votes(5)] * 6 + [votes(1)])
    annotated_study(answers=[votes(4)] * 3, study=study, component_name="simplicity", start=1000)
    with pytest.raises(CommandError, match="give a seed"):
        call_command("filter_instances", "--study", study.slug, "--balance", stdout=io.StringIO())
    first = run_command("filter_instances", "--study", study.slug, "--balance", "--seed", "13")
    assert first["balanced_away"] == 3
    assert first["counts_after"]["formality"] == {"validated": 3, "balanced_away": 3, "rejected": 1}
    assert first["counts_after"]["simplicity"] == {"validated": 3}
    validated = TaskInstance.objects.filter(status="validated")
    assert validated.filter(component__name="formality").count() == 3 == validated.filter(
        component__name="simplicity").count()
    kept_first = sorted(validated.values_list("pk", flat=True))
    # Reset and run again with the same seed: the same instances survive.
    TaskInstance.objects.update(status="candidate")
    run_command("filter_instances", "--study", study.slug, "--balance", "--seed", "13")
    assert sorted(TaskInstance.objects.filter(status="validated").values_list("pk", flat=True)) == kept_first
    assert FilterRun.objects.filter(study=study).count() == 2


@pytest.mark.django_db
def test_filter_errors_store_nothing() -> None:
    study, _ = annotated_study(answers=[votes(5)])
    out = io.StringIO()
    with pytest.raises(CommandError, match="between 1 and"):
        call_command("filter_instances", "--study", study.slug, "--min-correct", "6", stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1])["ok"] is False
    with pytest.raises(CommandError, match="does not exist"):
        call_command("filter_instances", "--study", "missing", stdout=io.StringIO())
    assert not FilterRun.objects.exists() and TaskInstance.objects.get().status == "candidate"


# --- property tests of the majority / filter logic ----------------------------------------------------


@given(k=st.integers(1, 9), data=st.data())
def test_decide_matches_the_rule(k: int, data: st.DataObject) -> None:
    m = data.draw(st.integers(1, k))
    n = data.draw(st.integers(1, 30))
    n_correct = np.array(data.draw(st.lists(st.integers(0, k), min_size=n, max_size=n)))
    complete = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    has_correct = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    result = decide(complete=complete, has_correct=has_correct, n_correct=n_correct, m=m)
    for i in range(n):
        if not has_correct[i]:
            assert result[i] == "no-correct-answer"
        elif not complete[i]:
            assert result[i] == "incomplete"
        else:
            assert (result[i] == "validated") == (n_correct[i] >= m)
            assert result[i] in ("validated", "rejected")


@settings(max_examples=60)
@given(sizes=st.dictionaries(st.sampled_from(["formality", "simplicity", "contraction", "nbr_substitution"]),
                             st.integers(1, 40), min_size=1), seed=st.integers(0, 2**32 - 1))
def test_balance_properties(sizes: dict[str, int], seed: int) -> None:
    rows, next_id = [], 1
    for name, size in sizes.items():
        for _ in range(size):
            rows.append({"component": name, "instance_id": next_id})
            next_id += 1
    frame = pd.DataFrame(rows)
    dropped = balance_validated(validated=frame, seed=seed)
    kept = frame[~frame["instance_id"].isin(dropped)]
    target = min(sizes.values())
    assert set(kept.groupby("component").size().tolist()) == {target}  # equal sizes, as small as the smallest
    assert len(dropped) == len(set(dropped)) == sum(sizes.values()) - target * len(sizes)
    assert np.array_equal(dropped, balance_validated(validated=frame.sample(frac=1, random_state=1), seed=seed))


@pytest.mark.django_db
def test_filter_task_redelivered_after_storing_does_not_filter_twice() -> None:
    """A worker dies after the FilterRun is committed but before its Job is marked done: the redelivered task
    finds the run made for that job and reports it instead of recording a second decision."""
    from core.jobs import job_create
    from core.models import Job
    from scoring.celery_tasks.agreement import filter_run_task

    study, _ = annotated_study(answers=[votes(5), votes(1)])
    params = {"study": study.slug, "min_correct": None, "balance": False, "seed": None}
    job = job_create(kind="filter_instances", params=params)
    first = instances_filter(study=study, job=job)  # what the killed delivery had stored
    filter_run_task(job.pk)  # the redelivery (the task reads its parameters from the job's row)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.result["filter_run"] == first.pk
    assert FilterRun.objects.filter(study=study).count() == 1


@pytest.mark.django_db
def test_a_withdrawn_instance_is_neither_validated_nor_rejected_nor_counted() -> None:
    study, items = annotated_study(answers=[votes(5), votes(0), votes(5)])
    TaskInstance.objects.filter(pk=items[2].instance_id).update(status="withdrawn")
    summary = run_command("filter_instances", "--study", study.slug)
    status = {item.pk: TaskInstance.objects.get(pk=item.instance_id).status for item in items}
    assert [status[i.pk] for i in items] == ["validated", "rejected", "withdrawn"]
    assert summary["validated"] == 1 and summary["rejected"] == 1
    assert FilterRun.objects.get(pk=summary["filter_run"]).counts_before["status"]["formality"] == {"candidate": 2}
