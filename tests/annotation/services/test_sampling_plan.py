"""A sampling plan sizes each component's share of a study from expected validation rates (STEL: 0.68 vs 0.88)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import StudyItem
from annotation.services.sampling_plan import sampling_plan_compute
from tests.factories import CorpusFactory, TaskInstanceFactory, annotated_study, component

pytestmark = pytest.mark.django_db


def create_study(*args: str) -> dict:
    out = io.StringIO()
    call_command("create_study", *args, "--screening-per-batch", "0", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def instances(name: str, n: int) -> None:
    corpus = CorpusFactory(component=component(name))
    for i in range(n):
        TaskInstanceFactory(corpus=corpus, family=f"{name}-{i}")


def test_given_rates_size_each_component() -> None:
    instances("formality", 30)
    instances("simplicity", 30)
    summary = create_study("--slug", "plan", "--setup", "quadruple", "--component", "formality", "--component",
                           "simplicity", "--target-validated", "10", "--validation-rate", "simplicity=0.68",
                           "--validation-rate", "formality=0.88", "--seed", "2")
    # ceil(10 / 0.88) = 12 formal, ceil(10 / 0.68) = 15 simple: more simple items, as STEL sampled
    assert summary["per_component"] == {"formality": 12, "simplicity": 15}
    assert summary["sampling_plan"]["components"]["simplicity"]["expected_validated"] == pytest.approx(10.2)
    assert StudyItem.objects.filter(study__slug="plan").count() == 27
    # too few instances: the plan takes what there is and reports the shortfall
    plan = sampling_plan_compute(setup="quadruple", components=["formality"], target_validated=40,
                                 rates={"formality": 0.88})
    assert plan["components"]["formality"] == {
        "rate": 0.88, "rate_source": "given", "needed": 46, "sample": 30, "available": 30,
        "expected_validated": 26.4, "shortfall": 16,
    }


def test_rates_measured_on_an_earlier_filtered_study() -> None:
    right, wrong = "S2-S1", "S1-S2"
    study, _ = annotated_study(answers=[[right] * 5] * 3 + [[wrong] * 5], component_name="formality")
    annotated_study(answers=[[right] * 5] + [[wrong] * 5], study=study, component_name="simplicity", start=500)
    call_command("filter_instances", "--study", study.slug, stdout=io.StringIO())
    instances("formality", 20)
    instances("simplicity", 20)
    plan = sampling_plan_compute(setup="quadruple", components=["formality", "simplicity"], target_validated=6,
                                 rates_from_studies=[study.slug])
    assert plan["components"]["formality"]["rate"] == 0.75 and plan["components"]["formality"]["sample"] == 8
    assert plan["components"]["simplicity"]["rate"] == 0.5 and plan["components"]["simplicity"]["sample"] == 12
    with pytest.raises(CommandError, match="no validation rate for component 'contraction'"):
        create_study("--slug", "x", "--setup", "quadruple", "--component", "contraction", "--target-validated", "5",
                     "--rates-from-study", study.slug)
    with pytest.raises(CommandError, match="no study 'nope'"):
        create_study("--slug", "y", "--setup", "quadruple", "--component", "formality", "--target-validated", "5",
                     "--rates-from-study", "nope")
