"""The overall ranking of system outputs as GYAFC reports it (Rao & Tetreault 2018, human evaluation): every
judgment ranks a source's outputs best first; a system's score is its mean rank over all judgments (1 = best).
Agreement on the ranks: Krippendorff's alpha, ordinal, with each (item, output) as a unit and its rank as the value."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from annotation.models import ItemKind, Response, Study
from core.errors import ApplicationError
from scoring.agreement.stats.alpha import krippendorff_alpha_of, value_counts_from_long
from scoring.error_codes import NO_RESPONSES, NOT_A_RANKING_STUDY


def ranking_summary(*, study: Study) -> dict[str, Any]:
    if study.item_kind != ItemKind.RANKING:
        raise ApplicationError(f"study {study.slug!r} holds {study.item_kind} items, not rankings",
                               code=NOT_A_RANKING_STUDY)
    rows = Response.objects.filter(study=study, is_valid=True, study_item__isnull=False).values_list(
        "study_item_id", "participant_id", "answer", "study_item__payload")
    records = []
    for item_id, participant_id, answer, payload in rows:
        system_of = {str(o["id"]): o.get("system") or str(o["id"]) for o in payload.get("outputs", [])}
        for rank, output_id in enumerate(json.loads(answer), start=1):
            records.append((item_id, participant_id, f"{item_id}:{output_id}", system_of[str(output_id)], rank))
    if not records:
        raise ApplicationError(f"study {study.slug!r} has no rankings yet", code=NO_RESPONSES)
    frame = pd.DataFrame(records, columns=["item", "participant", "unit", "system", "rank"])
    per_system = frame.groupby("system")["rank"].agg(["mean", "std", "count"]).sort_values("mean")
    systems = [{"system": name, "mean_rank": round(float(row["mean"]), 4),
                "std": None if np.isnan(row["std"]) else round(float(row["std"]), 4), "judgments": int(row["count"])}
               for name, row in per_system.iterrows()]
    units = pd.Index(frame["unit"].unique())
    max_rank = int(frame["rank"].max())
    counts = value_counts_from_long(unit_codes=units.get_indexer(frame["unit"]),
                                    value_codes=frame["rank"].to_numpy() - 1, n_units=len(units), n_values=max_rank)
    alpha = krippendorff_alpha_of(value_counts=counts, value_domain=np.arange(1, max_rank + 1), level="ordinal")
    return {"study": study.slug, "items": int(frame["item"].nunique()), "judgments": int(len(rows)),
            "systems": systems, "krippendorff_alpha_ordinal": alpha}
