"""Where a study stands in scoring, for its overview (scoring/selectors.py): the agreement run to show (a computed
one first), filter runs, the latest export and its score runs; and the model runs whose answers depend on the order
of the options, by their summary's order sensitivity or by how often they pick the first option."""
from __future__ import annotations

import pytest
from django.utils import timezone

from scoring.models import BenchmarkExport, FilterRun, ModelAnswer, ModelRun, ScoreRun
from scoring.selectors import order_dependent_runs, study_scoring_overview
from tests import factories as f

pytestmark = pytest.mark.django_db


def _run(study, label: str, *, first: list[int], sensitive: float | None = None) -> ModelRun:  # noqa: ANN001
    run = ModelRun.objects.create(study=study, label=label, backend="openai", model="m", computed_at=timezone.now(),
                                  summary={"order_sensitive_share": sensitive})
    for n, index in enumerate(first):
        ModelAnswer.objects.create(run=run, study_item=f.StudyItemFactory(study=study), order=f"o{n}",
                                   answer="S1-S2", option_index=index, status="answered", cache_key=f"{label}{n}")
    return run


def test_model_runs_that_depend_on_order_are_found(django_assert_num_queries) -> None:  # noqa: ANN001
    study = f.StudyFactory()
    picker = _run(study, "first-picker", first=[0] * 10)
    _run(study, "fair", first=[0, 1] * 5, sensitive=0.1)
    swayed = _run(study, "swayed", first=[0, 1] * 5, sensitive=0.8)
    ModelRun.objects.create(study=study, label="not computed", backend="openai", model="m",
                            summary={"order_sensitive_share": 1.0})
    with django_assert_num_queries(1):
        found = order_dependent_runs(study=study)
    assert sorted((r["id"], r["label"], r["first_option_share"], r["order_sensitive_share"]) for r in found) == [
        (picker.pk, "first-picker", 1.0, None), (swayed.pk, "swayed", 0.5, 0.8)]


def test_where_a_study_stands_in_scoring() -> None:
    study = f.StudyFactory()
    assert study_scoring_overview(study=study) == {"agreement_run": None, "agreement_computed": False,
                                                   "filter_runs": 0, "export": None, "score_runs": 0,
                                                   "order_dependent_runs": []}
    pending = f.AgreementRunFactory(study=study)
    computed = f.AgreementRunFactory(study=study, computed_at=timezone.now())
    f.AgreementRunFactory(study=study)  # newer, not computed: the dashboard shows the computed one
    FilterRun.objects.create(study=study, min_correct=3, annotators_per_item=5)
    export = BenchmarkExport.objects.create(study=study, name="b", format="stel-tsv", path="/x/b.tsv")
    ScoreRun.objects.create(export=export)
    facts = study_scoring_overview(study=study)
    assert (facts["agreement_run"], facts["agreement_computed"]) == (computed.pk, True) and pending.pk != computed.pk
    assert (facts["filter_runs"], facts["export"], facts["score_runs"]) == (1, export.pk, 1)
