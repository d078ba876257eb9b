"""Which task instances an export holds, with their votes, labels and splits: one frame every format writes from.

Rows come in a fixed order (corpus name, setup, position, id) so that the same database gives the same files.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annotation.models import Study, StudyItem
from annotation.services.adaptive import study_posterior_rule
from core.errors import ApplicationError
from scoring.agreement import selectors
from scoring.agreement.stats.votes import first_k_responses, instance_votes
from scoring.agreement.uncertainty import pooled_uncertainty, study_uncertainty
from scoring.error_codes import INVALID_SETUP, NOTHING_TO_EXPORT, UNKNOWN_CORPUS
from scoring.export.fields import STATUSES
from tasks.error_codes import INVALID_STATUS, UNKNOWN_COMPONENT
from tasks.models import Corpus, InstanceStatus, Setup, StyleComponent, TaskInstance

# Split names as the Hugging Face hub knows them; corpora built with train/tune/test splits (GYAFC's names) map here.
SPLIT_NAMES = {"train": "train", "tune": "validation", "dev": "validation", "validation": "validation",
               "test": "test"}
# An instance built from pairs of two splits belongs to the more held-out one, so that no test pair reaches train.
SPLIT_RANK = {"train": 0, "validation": 1, "test": 2}
DEFAULT_SPLIT = "test"  # STEL-style benchmarks are evaluation sets
STEL_PUBLISHED_K = 5  # STEL's published votes are out of 5

_COLUMNS = {
    "id": "instance_id", "anchor_1": "anchor_1", "anchor_2": "anchor_2", "sentence_1": "alternative_1_1",
    "sentence_2": "alternative_1_2", "correct_order": "correct_order", "stel_id": "id",
    "published_votes": "published_votes", "component__name": "style_type", "corpus_id": "corpus_id",
    "corpus__name": "corpus", "setup": "setup", "status": "status", "generation_run_id": "generation_run_id",
    "anchor_pair__source_id": "anchor_pair", "sentence_pair__source_id": "sentence_pair",
    "anchor_1_style": "anchor_1_style", "sentence_1_style": "sentence_1_style",
    "anchor_pair__metadata__split": "anchor_split", "sentence_pair__metadata__split": "sentence_split",
}


@dataclass(frozen=True)
class Selection:
    """An export's filters, as every door passes them."""

    corpus: str = ""
    component: str = ""
    setup: str = ""
    status: str = "all"
    study: str = ""

    def as_params(self) -> dict[str, str]:
        return {"corpus": self.corpus, "component": self.component, "setup": self.setup, "status": self.status,
                "study": self.study}

    def default_name(self) -> str:
        """The benchmark's name when none is given: what the selection is of (versions are counted per name)."""
        parts = [self.study or self.corpus or "all", self.component, self.setup, self.status]
        return "-".join(part for part in parts if part)


def selection_check(selection: Selection) -> Study | None:
    """The selection's study; unknown names and values are refused in plain words."""
    if selection.status not in STATUSES:
        raise ApplicationError(f"Status must be one of {', '.join(STATUSES)}, not '{selection.status}'.",
                               code=INVALID_STATUS, field="status")
    if selection.corpus and not Corpus.objects.filter(name=selection.corpus).exists():
        raise ApplicationError(f"corpus '{selection.corpus}' does not exist", code=UNKNOWN_CORPUS, status=404,
                               field="corpus")
    if selection.component and not StyleComponent.objects.filter(name=selection.component).exists():
        raise ApplicationError(f"style component '{selection.component}' does not exist", code=UNKNOWN_COMPONENT,
                               field="component")
    if selection.setup and selection.setup not in Setup.values:
        raise ApplicationError(f"setup '{selection.setup}' must be one of {', '.join(Setup.values)}",
                               code=INVALID_SETUP, field="setup")
    return selectors.study_get(slug=selection.study) if selection.study else None


def instances_frame(*, selection: Selection, study: Study | None) -> pd.DataFrame:
    """The selected instances, one row each, in the export order; no votes yet."""
    # Withdrawn instances (built from a rewrite whose writer asked for erasure) leave every export, "all" included.
    queryset = TaskInstance.objects.exclude(status=InstanceStatus.WITHDRAWN)
    if selection.corpus:
        queryset = queryset.filter(corpus__name=selection.corpus)
    if selection.component:
        queryset = queryset.filter(component__name=selection.component)
    if selection.setup:
        queryset = queryset.filter(setup=selection.setup)
    if selection.status != "all":
        queryset = queryset.filter(status=selection.status)
    if study is not None:
        queryset = queryset.filter(
            pk__in=StudyItem.objects.filter(study=study, instance__isnull=False).values("instance_id"))
    rows = queryset.order_by("corpus__name", "setup", "position", "id").values_list(*_COLUMNS)
    return pd.DataFrame.from_records(list(rows), columns=list(_COLUMNS.values()))


def annotated_votes(*, instance_ids: list[int], study: Study | None,
                    source: dict[int, Study] | None = None) -> tuple[dict[int, int], list[Study]]:
    """Correct votes among the first k valid responses, for instances whose annotation is complete.

    With `study` only that study counts; otherwise every study showing the instances, later studies winning
    (`source`, when given, gets the study each instance's votes came from)."""
    if study is not None:
        studies = [study]
    else:
        showing = Study.objects.filter(items__instance_id__in=instance_ids).distinct()
        studies = list(showing.order_by("created_at", "id"))
    wanted = set(instance_ids)
    votes: dict[int, int] = {}
    used: list[Study] = []
    for each in studies:
        items = selectors.items_frame(study_id=each.pk)
        items = items[items["instance_id"].isin(wanted)]
        if items.empty:
            continue
        responses = selectors.responses_frame(study_id=each.pk)
        first_k = first_k_responses(responses=responses, k=each.annotators_per_item)
        per_item = instance_votes(first_k=first_k, items=items, k=each.annotators_per_item, m=each.min_correct,
                                  rule=study_posterior_rule(each))
        complete = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
        if not complete.empty:
            used.append(each)
        votes.update(dict(zip(complete["instance_id"].astype(int), complete["n_correct"].astype(int), strict=True)))
        if source is not None:
            source.update({int(i): each for i in complete["instance_id"]})
    return votes, used


UNCERTAINTY_COLUMNS = ("p_correct", "p_correct_low", "p_correct_high")


def _published_uncertainty(frame: pd.DataFrame) -> dict[int, tuple[float, float, float, str]]:
    """STEL's published counts: the pooled one-coin model, fitted per corpus on all its instances with published
    votes (whatever the export selects, so that a selection of validated instances does not fit a truncated
    sample)."""
    corpora = [int(c) for c in frame.loc[frame["published_votes"].notna(), "corpus_id"].unique()]
    out: dict[int, tuple[float, float, float, str]] = {}
    for corpus_id in sorted(corpora):
        rows = list(TaskInstance.objects.filter(corpus_id=corpus_id, published_votes__isnull=False)
                    .exclude(status=InstanceStatus.WITHDRAWN).order_by("id").values_list("id", "published_votes"))
        ids = np.asarray([r[0] for r in rows])
        n_correct = np.asarray([r[1] for r in rows])
        result = pooled_uncertainty(items=ids, n_correct=n_correct,
                                    n_votes=np.full(len(ids), STEL_PUBLISHED_K), seed=0)
        out.update({int(row.item): (row.p_correct, row.p_correct_low, row.p_correct_high, result.model)
                    for row in result.per_item.itertuples()})
    return out


def uncertainty_columns(frame: pd.DataFrame, source: dict[int, Study],
                        choices: list[dict[str, Any]] | None = None) -> dict[str, list[Any]]:
    """Per exported row: the probability that its gold answer is right, its interval and the model that gave them
    (`scoring.agreement.uncertainty`), from the study its votes came from, else from its published counts.
    `choices`, when given, gets each study's model and why (its `uncertainty_model` setting, or auto's test)."""
    values: dict[int, tuple[float, float, float, str]] = {}
    for study in sorted(set(source.values()), key=lambda s: s.pk):
        result = study_uncertainty(study=study, seed=0)
        if result is None:
            continue
        if choices is not None:
            choices.append({"study": study.slug, **result.facts["model_choice"]})
        for row in result.per_item.itertuples():
            if row.instance_id is not None and source.get(int(row.instance_id)) == study:
                values[int(row.instance_id)] = (row.p_correct, row.p_correct_low, row.p_correct_high, result.model)
    published = _published_uncertainty(frame[frame["votes_source"] == "published"])
    per_row = [values.get(int(i)) or (published.get(int(i)) if s == "published" else None)
               for i, s in zip(frame["instance_id"], frame["votes_source"], strict=True)]
    columns: dict[str, list[Any]] = {name: [None if v is None else float(v[n]) for v in per_row]
                                     for n, name in enumerate(UNCERTAINTY_COLUMNS)}
    columns["uncertainty_model"] = ["" if v is None else v[3] for v in per_row]
    return columns


def _split(anchor: Any, sentence: Any) -> str:
    names = [SPLIT_NAMES.get(str(value).strip().lower()) for value in (anchor, sentence)
             if isinstance(value, str) and value.strip()]
    known = [name for name in names if name]
    return max(known, key=SPLIT_RANK.__getitem__) if known else DEFAULT_SPLIT


def benchmark_frame(*, selection: Selection, study: Study | None) -> tuple[pd.DataFrame, list[Study]]:
    """The selected instances with votes (annotated, else as published), STEL's correct alternative, the split and
    the key that versions compare (`corpus/id`). Nothing to export is an error."""
    frame = instances_frame(selection=selection, study=study)
    if frame.empty:
        raise ApplicationError("no task instances match the export's filters", code=NOTHING_TO_EXPORT, status=404)
    source: dict[int, Study] = {}
    votes, vote_studies = annotated_votes(instance_ids=frame["instance_id"].astype(int).tolist(), study=study,
                                          source=source)
    annotated = frame["instance_id"].map(votes)
    published = frame["published_votes"].astype("Float64")
    combined = annotated.astype("Float64").fillna(published).fillna(-1).astype(int)
    frame = frame.assign(
        votes=combined, votes_text=[("" if v < 0 else str(v)) for v in combined],
        votes_source=["annotations" if pd.notna(a) else ("published" if pd.notna(p) else "")
                      for a, p in zip(annotated, published, strict=True)],
        correct_alternative=(frame["correct_order"] != "S1-S2").astype(int) + 1,
        split=[_split(a, s) for a, s in zip(frame["anchor_split"], frame["sentence_split"], strict=True)],
        key=frame["corpus"] + "/" + frame["id"],
    )
    choices: list[dict[str, Any]] = []
    frame = frame.assign(**uncertainty_columns(frame, source, choices))
    frame.attrs["uncertainty_choices"] = choices  # the card's per-item uncertainty section says which model and why
    return frame, vote_studies
