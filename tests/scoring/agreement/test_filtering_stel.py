"""STEL's protocol pieces in filter_instances: the surplus-vote rule and balancing within chosen groups."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.agreement.filtering import balance_validated
from tasks.models import TaskInstance
from tests.factories import annotated_study

pytestmark = pytest.mark.django_db
RIGHT, WRONG = "S2-S1", "S1-S2"  # the factory's instances have correct order S2-S1


def run_command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_stel_surplus_rule_removes_correct_votes_first() -> None:
    # 7 responses each (k = 5, m = 3). Item 0: the first five are 3 right, 2 wrong, then 2 more wrong: the first-k
    # rule validates it, STEL's keeps the 4 wrong and 1 right vote and rejects it. Item 1: 6 right, 1 wrong: both
    # validate (STEL keeps 4 right). Item 2: an ordinary item with 5 responses is not touched.
    answers = [[RIGHT, RIGHT, RIGHT, WRONG, WRONG, WRONG, WRONG], [RIGHT] * 6 + [WRONG], [RIGHT] * 3 + [WRONG] * 2]
    study, items = annotated_study(answers=answers)
    first = run_command("filter_instances", "--study", study.slug)
    assert first["surplus"] == "first" and first["validated"] == 3
    stel = run_command("filter_instances", "--study", study.slug, "--surplus", "stel")
    assert stel["surplus"] == "stel" and stel["validated"] == 2 and stel["rejected"] == 1
    assert stel["surplus_items_changed"] == 2  # item 0: 3 → 1 correct votes, item 1: 5 → 4
    statuses = [TaskInstance.objects.get(pk=item.instance_id).status for item in items]
    assert statuses == ["rejected", "validated", "validated"]


def test_balance_groups_cut_only_within_each_group() -> None:
    frame = pd.DataFrame({
        "component": ["formality"] * 8 + ["simplicity"] * 5 + ["contraction"] * 2,
        "instance_id": np.arange(15),
    })
    dropped = balance_validated(validated=frame, seed=1, groups=[["formality", "simplicity"]])
    assert len(dropped) == 3 and set(dropped) <= set(range(8))  # formality 8 → simplicity's 5; contraction kept
    everything = balance_validated(validated=frame, seed=1)
    assert len(everything) == (8 - 2) + (5 - 2)  # the old behaviour: every component cut to the smallest


def test_balance_groups_from_the_command() -> None:
    study, _ = annotated_study(answers=[[RIGHT] * 5] * 4, component_name="formality")
    annotated_study(answers=[[RIGHT] * 5] * 2, study=study, component_name="simplicity", start=1000)
    annotated_study(answers=[[RIGHT] * 5], study=study, component_name="contraction", start=2000)
    summary = run_command("filter_instances", "--study", study.slug, "--balance-groups", "formality,simplicity",
                          "--seed", "3")
    assert summary["balanced_away"] == 2 and summary["balance_groups"] == [["formality", "simplicity"]]
    assert summary["counts_after"]["contraction"] == {"validated": 1}
    with pytest.raises(CommandError, match="nope"):
        run_command("filter_instances", "--study", study.slug, "--balance-groups", "formality,nope", "--seed", "3")
