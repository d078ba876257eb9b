"""Annotator ids that are positions (count-only data's vote columns) told apart from people
(scoring/agreement/positional_ids.py)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from scoring.agreement.positional_ids import positional_ids
from scoring.agreement.simulated_crowds import CrowdSpec, crowd_simulate


def test_positional_ids_are_told_apart_from_people() -> None:
    items = np.repeat(np.arange(30), 5)
    positions = np.tile(np.arange(5), 30)
    names = {i: f"worker-{i + 1}" for i in range(5)}
    positional, warning = positional_ids(items=items, workers=positions, names=names)
    assert positional and "worker-1 … worker-5" in warning and "positions" in warning
    # the same structure with people's names: a warning, not a verdict
    positional, warning = positional_ids(items=items, workers=positions,
                                         names={i: n for i, n in enumerate(["ann", "bo", "cy", "di", "ed"])})
    assert not positional and "If they are people, ignore this" in warning
    # a crowd where nobody answered everything: nothing to say
    crowd = crowd_simulate(replace(CrowdSpec(), n_items=200), seed=1)
    assert positional_ids(items=crowd.items, workers=crowd.workers, names={}) == (False, None)
