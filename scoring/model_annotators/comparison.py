"""A model measured as the crowd is measured, per model run and per style component, on the same items, the same
first-k responses and the same human majority as the agreement run (`scoring.agreement.stats`):

- accuracy on known-answer items and on the validated benchmark (every order asked counts; no answer counts as
  wrong), and, beside it, the crowd's majority accuracy on the same items;
- agreement with the human majority: Cohen's kappa (scikit-learn; linear weights on ordinal scales) between the
  model's answer in each order and the majority of the first k human answers, with a seeded percentile bootstrap
  over items (an item's orders are resampled together);
- Krippendorff's alpha (`krippendorff`) of the crowd without and with the model as one more rater (its answer in
  the first order asked, as a participant gives one answer), on the same units;
- order sensitivity (a different answer when only the order of display changes) and position bias (the share of
  answers that are the first option listed);
- the items where the crowd was split (a tie, or a bare majority: at most half the votes plus one, as 3 of 5 or
  2 of 3), with what the model said in each order;
- model accuracy by the human share of correct votes (the dashboard's plot).

Human figures are computed by the agreement code from `Response` rows alone; nothing here writes or feeds back.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annotation.models import Study, StudyItem
from scoring.agreement import selectors
from scoring.agreement.stats.alpha import alpha_counts, krippendorff_alpha_of
from scoring.agreement.stats.scales import study_scale
from scoring.agreement.stats.votes import first_k_responses, votes_compute
from scoring.models import AgreementRun, ModelAnswer, ModelRun
from tasks.models import InstanceStatus, TaskInstance

from .selectors import item_verdicts, model_answers_frame, order_warnings

MAX_RUNS = 10  # the latest computed runs of a study
MAX_SPLIT_ITEMS = 30


def cohen_kappa(model: np.ndarray, human: np.ndarray, *, ordinal: bool) -> float | None:
    # heavy: scikit-learn loads only when this computation runs
    from sklearn.metrics import cohen_kappa_score

    if len(model) < 2 or len(set(model) | set(human)) < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(cohen_kappa_score(model, human, weights="linear" if ordinal else None))
    return None if np.isnan(value) else value


def kappa_ci(frame: pd.DataFrame, *, ordinal: bool, seed: int, resamples: int) -> dict[str, Any]:
    """Percentile 95% interval of kappa over items resampled with replacement (all orders of an item together)."""
    items = frame["item_id"].unique()
    if len(items) < 2 or resamples <= 0:
        return {"low": None, "high": None, "resamples": 0}
    rows_of = {item: idx for item, idx in frame.groupby("item_id").indices.items()}
    model, human = frame["model"].to_numpy(), frame["human"].to_numpy()
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        picked = np.concatenate([rows_of[item] for item in rng.choice(items, size=len(items), replace=True)])
        value = cohen_kappa(model[picked], human[picked], ordinal=ordinal)
        if value is not None:
            values.append(value)
    if not values:
        return {"low": None, "high": None, "resamples": resamples}
    low, high = np.percentile(values, [2.5, 97.5])
    return {"low": float(low), "high": float(high), "resamples": resamples}


def _numeric(answers: pd.Series) -> np.ndarray:
    return pd.to_numeric(answers, errors="coerce").to_numpy(dtype="float64")


def model_comparison_compute(*, study: Study, question: str = "", level: str = "", component: str = "",
                             k: int | None = None, m: int | None = None, seed: int = 0,
                             resamples: int = 1000) -> dict[str, Any] | None:
    """The `models` section of an agreement run's result (None when no model run of the study has finished)."""
    runs = list(ModelRun.objects.filter(study=study, computed_at__isnull=False).order_by("-computed_at")[:MAX_RUNS])
    if not runs:
        return None
    scale = study_scale(study=study, question=question, level=level)
    k = int(k or study.annotators_per_item)
    m = int(m or study.min_correct)
    responses = selectors.responses_frame(study_id=study.pk, question=scale.question or None)
    items = selectors.items_frame(study_id=study.pk)
    if component:
        items = items[items["component"] == component]
        responses = responses[responses["is_screening"] | responses["item_id"].isin(items["item_id"])]
    first_k = first_k_responses(responses=responses, k=k)
    data = votes_compute(first_k=first_k, items=items, k=k, m=m)
    per_item = data.per_item.set_index("item_id")
    first_k = first_k[first_k["item_id"].isin(per_item.index)]
    status = dict(TaskInstance.objects.filter(pk__in=[int(i) for i in per_item["instance_id"] if i >= 0])
                  .values_list("pk", "status"))
    validated = per_item["instance_id"].map(status).eq(InstanceStatus.VALIDATED)
    ordinal = scale.level != "nominal"
    out = []
    for run in reversed(runs):  # oldest first, as they were added
        answers = model_answers_frame(run=run, question=scale.question)
        answers = answers[answers["item_id"].isin(per_item.index)]
        if answers.empty:
            continue
        body: dict[str, Any] = {"model_run": run.pk, "label": run.label, "backend": run.backend, "model": run.model,
                                "stopped": run.stopped}
        body["overall"] = _group(answers, per_item, first_k, data, scale, validated, ordinal, seed, resamples)
        body["components"] = {}
        for name in sorted(set(per_item["component"]) - {""}):
            ids = per_item.index[per_item["component"] == name]
            group = answers[answers["item_id"].isin(ids)]
            if not group.empty:
                body["components"][name] = _group(group, per_item.loc[ids], first_k[first_k["item_id"].isin(ids)],
                                                  data, scale, validated, ordinal, seed, resamples)
        body["split_items"] = _split_items(answers, per_item, data)
        body["by_vote_share"] = _by_vote_share(answers, per_item, k)
        out.append(body)
    if not out:
        return None
    return {"runs": out, "k": k, "min_correct": m, "question": scale.question, "level": scale.level,
            "note": "Model answers are stored apart from the crowd's and never counted in k, the majority, "
                    "agreement, the filter or exports; kappa compares each order's answer with the human majority."}


def _group(answers: pd.DataFrame, per_item: pd.DataFrame, first_k: pd.DataFrame, data: Any, scale: Any,
           validated: pd.Series, ordinal: bool, seed: int, resamples: int) -> dict[str, Any]:
    answered = answers["answer"] != ""
    known = answers["is_correct"].notna()
    on_validated = answers["item_id"].map(validated).fillna(False).astype(bool) & known
    item_ids = answers["item_id"].unique()
    crowd = per_item.loc[item_ids]
    crowd_known = crowd[crowd["complete"] & (crowd["correct_answer"] != "")]
    verdicts = item_verdicts(answers)
    with_orders = verdicts[verdicts["n_answered"] >= 2]
    first_option = pd.to_numeric(answers["option_index"], errors="coerce") == 0

    # kappa: each order's answer against the human majority (items with a majority, orders with an answer)
    majority = answers["item_id"].map(per_item["majority_answer"]).fillna("")
    pairs = pd.DataFrame({"item_id": answers["item_id"], "model": answers["answer"], "human": majority})
    pairs = pairs[(pairs["model"] != "") & (pairs["human"] != "")]
    if ordinal:
        pairs = pairs.assign(model=_numeric(pairs["model"]), human=_numeric(pairs["human"]))
    kappa = cohen_kappa(pairs["model"].to_numpy(), pairs["human"].to_numpy(), ordinal=ordinal)

    alpha = _alpha_with_and_without(answers, per_item, first_k, scale)
    figures = {
        "n_items": len(item_ids), "asks": len(answers), "answered_share": float(answered.mean()),
        "accuracy": float(answers.loc[known, "is_correct"].mean()) if known.any() else None,
        "accuracy_answered": float(answers.loc[known & answered, "is_correct"].mean())
        if (known & answered).any() else None,
        "known_answer_asks": int(known.sum()),
        "accuracy_validated": float(answers.loc[on_validated, "is_correct"].mean()) if on_validated.any() else None,
        "validated_asks": int(on_validated.sum()),
        "crowd_majority_accuracy": float((crowd_known["majority_answer"] == crowd_known["correct_answer"]).mean())
        if len(crowd_known) else None,
        "kappa_with_majority": kappa,
        "kappa_with_majority_ci": kappa_ci(pairs, ordinal=ordinal, seed=seed, resamples=resamples)
        if kappa is not None else {"low": None, "high": None, "resamples": 0},
        "kappa_pairs": len(pairs),
        **alpha,
        "order_sensitive_share": float(with_orders["order_sensitive"].mean()) if len(with_orders) else None,
        "order_sensitive_items": int(with_orders["order_sensitive"].sum()),
        "first_option_share": float(first_option[answered].mean()) if answered.any() else None,
    }
    return {**figures, "warnings": order_warnings(figures)}


def _alpha_with_and_without(answers: pd.DataFrame, per_item: pd.DataFrame, first_k: pd.DataFrame,
                            scale: Any) -> dict[str, Any]:
    """Krippendorff's alpha of the crowd alone and with the model as one more rater, on the same units: items
    with two or more human ratings and a model answer in the first order asked."""
    first = answers.sort_values(["item_id", "order"], kind="stable").groupby("item_id").first()
    first = first[first["answer"] != ""]
    crowd = first_k[first_k["item_id"].isin(first.index)]
    n_human = crowd.groupby("item_id").size()
    units = n_human.index[n_human >= 2]
    if len(units) < 2:
        return {"alpha_crowd": None, "alpha_with_model": None, "alpha_units": int(len(units))}
    crowd = crowd[crowd["item_id"].isin(units)]
    unit_pos = pd.Index(units)
    counts, domain = alpha_counts(answers=crowd["answer"], values=crowd["value"],
                                  item_pos=unit_pos.get_indexer(crowd["item_id"]), n_items=len(units),
                                  domain=scale.domain, numeric=scale.numeric)
    model = first.loc[units]
    model_values = model["value"] if scale.numeric else model["answer"]
    extra, domain_with = alpha_counts(answers=model["answer"], values=model_values.astype("float64")
                                      if scale.numeric else model_values, item_pos=np.arange(len(units)),
                                      n_items=len(units), domain=list(domain), numeric=scale.numeric)
    if len(domain_with) != len(domain):  # the model used a value the crowd never did: widen the crowd's table
        counts, _ = alpha_counts(answers=crowd["answer"], values=crowd["value"],
                                 item_pos=unit_pos.get_indexer(crowd["item_id"]), n_items=len(units),
                                 domain=list(domain_with), numeric=scale.numeric)
        domain = domain_with
    return {
        "alpha_crowd": krippendorff_alpha_of(value_counts=counts, value_domain=domain, level=scale.level),
        "alpha_with_model": krippendorff_alpha_of(value_counts=counts + extra, value_domain=domain,
                                                  level=scale.level),
        "alpha_units": int(len(units)),
    }


def _split_items(answers: pd.DataFrame, per_item: pd.DataFrame, data: Any) -> list[dict[str, Any]]:
    used, top = per_item["n_used"], per_item["majority_votes"]
    split = per_item[(used >= 2) & (top < used) & (top <= used // 2 + 1)]
    position = {item: n for n, item in enumerate(data.per_item["item_id"])}
    out = []
    by_item = answers.groupby("item_id")
    for item_id, row in split.head(MAX_SPLIT_ITEMS).iterrows():
        if item_id not in by_item.groups:
            continue
        votes = data.counts[position[item_id]]
        model = by_item.get_group(item_id)
        out.append({
            "item_id": int(item_id), "external_id": row["external_id"], "component": row["component"],
            "correct_answer": row["correct_answer"],
            "votes": {cat: int(n) for cat, n in zip(data.categories, votes, strict=True) if n},
            "model": {f"{r.question}:{r.order}" if r.question else r.order: r.answer or f"({r.status})"
                      for r in model.itertuples()},
        })
    return out


def _by_vote_share(answers: pd.DataFrame, per_item: pd.DataFrame, k: int) -> list[dict[str, Any]]:
    """Model accuracy per number of correct human votes out of k (complete known-answer items)."""
    scored = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
    known = answers[answers["is_correct"].notna() & answers["item_id"].isin(scored.index)]
    if known.empty:
        return []
    votes = known["item_id"].map(scored["n_correct"])
    out = []
    for v in range(k + 1):
        rows = known[votes == v]
        out.append({"correct_votes": v, "share": round(v / k, 4), "items": int(rows["item_id"].nunique()),
                    "accuracy": float(rows["is_correct"].mean()) if len(rows) else None})
    return out



def models_card(*, instance_ids: list[int], studies: list[Study]) -> list[dict[str, Any]]:
    """The dataset card's model section: per finished model run of the studies that gave the votes, its accuracy on
    the exported rows (and on those validated), with the agreement figures of the study's latest agreement run."""

    if not studies or not instance_ids:
        return []
    wanted = set(instance_ids)
    status = dict(TaskInstance.objects.filter(pk__in=wanted).values_list("pk", "status"))
    out = []
    for run in ModelRun.objects.filter(study__in=studies, computed_at__isnull=False).select_related("study") \
            .order_by("computed_at")[:MAX_RUNS]:
        items = dict(StudyItem.objects.filter(study=run.study, instance_id__in=wanted).values_list("pk",
                                                                                                   "instance_id"))
        rows = list(ModelAnswer.objects.filter(run=run, study_item_id__in=list(items), question="")
                    .values_list("study_item_id", "is_correct"))
        known = [(items[item], correct) for item, correct in rows if correct is not None]
        on_validated = [correct for instance, correct in known if status.get(instance) == InstanceStatus.VALIDATED]
        latest = AgreementRun.objects.filter(study=run.study, computed_at__isnull=False).order_by("-computed_at") \
            .first()
        figures = next((m["overall"] for m in ((latest.result or {}).get("models") or {}).get("runs", [])
                        if m["model_run"] == run.pk), {}) if latest else {}
        out.append({
            "model_run": run.pk, "label": run.label, "backend": run.backend, "model": run.model,
            "study": run.study.slug, "asks": len(rows),
            "accuracy": sum(c for _, c in known) / len(known) if known else None,
            "accuracy_validated": sum(on_validated) / len(on_validated) if on_validated else None,
            **{key: figures.get(key) for key in ("kappa_with_majority", "kappa_with_majority_ci", "alpha_crowd",
                                                 "alpha_with_model", "order_sensitive_share")},
            "agreement_source": f"agreement run #{latest.pk}" if figures else None,
        })
    return out
