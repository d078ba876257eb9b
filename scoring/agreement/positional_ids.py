"""Annotator ids that are positions, not people: count-only data written out as one column per vote gives every item
the same k "annotators" (worker-1 … worker-k), whose per-annotator reliabilities mean nothing. Dawid–Skene and MACE
(scoring.agreement.aggregation) refuse or warn on them, and the per-item uncertainty (scoring.agreement.uncertainty)
falls back to the pooled one-coin model."""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

ENUMERATED = re.compile(r"^(\D*?)(\d+)$")


def _enumerated(names: list[str]) -> bool:
    """"worker-1" … "worker-5", "rater_0" … "rater_2", "1" … "5": one prefix and the numbers 0…n−1 or 1…n."""
    matches = [ENUMERATED.match(name.strip()) for name in names]
    if not names or not all(matches):
        return False
    prefixes = {m.group(1) for m in matches if m}
    numbers = sorted(int(m.group(2)) for m in matches if m)
    return len(prefixes) == 1 and numbers[0] in (0, 1) and numbers == list(range(numbers[0], numbers[0] + len(names)))


def positional_ids(*, items: np.ndarray, workers: np.ndarray, names: dict[Any, str] | None = None
                   ) -> tuple[bool, str | None]:
    """(the ids are positions, a warning in words, or None) for answers given as (item, annotator id).

    Count-only data written out as one column per vote gives every item the same k "annotators" (worker-1 …
    worker-k): each of them then answered every item, and worker-5 is whoever came fifth. Such ids say nothing
    about anyone's reliability. Structure alone (as many annotators as answers per item, each on every item) is
    also what a small study of k people who each rated everything looks like, so it warns without calling them
    positions; enumerated names with that structure are positions."""
    frame = pd.DataFrame({"item": np.asarray(items), "worker": np.asarray(workers)})
    n_items = frame["item"].nunique()
    if n_items < 2:
        return False, None
    per_worker = frame.groupby("worker")["item"].nunique()
    per_item = frame.groupby("item").size()
    if len(per_worker) > per_item.max() or not (per_worker == n_items).all():
        return False, None
    shown = [str((names or {}).get(w, "")) for w in per_worker.index]
    if names is not None and all(shown) and _enumerated(shown):
        return True, (
            f"The {len(per_worker)} annotator ids ({shown[0]} … {shown[-1]}) each answered every one of the {n_items} "
            "items and are numbered like positions: they look like the vote columns of count-only data, not "
            "people. A per-annotator model (Dawid–Skene, MACE) would estimate the reliability of a position (the "
            "fifth vote is whoever answered fifth), so its per-annotator figures are not reported; the per-item "
            "uncertainty uses the pooled one-coin model instead. If these are people, import them under their own "
            "ids.")
    return False, (
        f"Every one of the {len(per_worker)} annotators answered every one of the {n_items} items. If the ids are "
        "positions (vote columns of count-only data) rather than people, per-annotator reliabilities mean nothing: "
        "import the votes as counts or under the annotators' own ids. If they are people, ignore this.")
