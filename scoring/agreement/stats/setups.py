"""Triple vs quadruple (STEL Table 2b and Table 4), for instances annotated in both setups.

Two items are the same instance in two setups when they share the `family` of the draw they come from.
"""
from __future__ import annotations

import pandas as pd


def triple_vs_quadruple(per_item: pd.DataFrame) -> dict:
    decided = per_item[per_item["decision"].isin(["validated", "rejected"]) & (per_item["family"] != "")]
    triple = decided[decided["setup"] == "triple"].drop_duplicates("family").set_index("family")["majority_correct"]
    quad = decided[decided["setup"] == "quadruple"].drop_duplicates("family").set_index("family")["majority_correct"]
    both = pd.DataFrame({"triple": triple, "quadruple": quad}).dropna()
    n = len(both)
    if n == 0:
        return {"n_instances": 0}
    t = both["triple"].astype(bool)
    q = both["quadruple"].astype(bool)
    cells = {
        "triple_correct_quadruple_correct": int((t & q).sum()),
        "triple_correct_quadruple_wrong": int((t & ~q).sum()),
        "triple_wrong_quadruple_correct": int((~t & q).sum()),
        "triple_wrong_quadruple_wrong": int((~t & ~q).sum()),
    }
    return {
        "n_instances": n,
        "counts": cells,
        "shares": {key: value / n for key, value in cells.items()},  # Table 2b
        "triple_accuracy": float(t.mean()),
        "quadruple_accuracy": float(q.mean()),
        # Table 4: how each setup does on the instances the other setup got right
        "triple_accuracy_where_quadruple_correct": float(t[q].mean()) if q.any() else None,
        "quadruple_accuracy_where_triple_correct": float(q[t].mean()) if t.any() else None,
    }
