"""filter_instances: mark a study's instances validated or rejected by the majority rule (m of k valid responses
correct), optionally balance the components (seeded; all, or within chosen groups), and keep an immutable FilterRun.

Which k responses count when an item has more (irregular data): `surplus="first"` takes the first k in time;
`surplus="stel"` is STEL's rule (eval_annotations.py): surplus votes are removed correct ones first, so the item keeps
min(k, incorrect) incorrect votes and k − that many correct ones (85 of STEL's 2,113 items had more than 5)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from django.db import transaction

from annotation.models import Study, StudyItem
from annotation.services.adaptive import study_posterior_rule
from core.errors import ApplicationError
from core.jobs import job_create, job_enqueue, progress_for
from core.models import Job
from scoring.agreement import selectors
from scoring.agreement.runs import json_safe
from scoring.agreement.selectors import study_get
from scoring.agreement.stats.summary import agreement_compute
from scoring.error_codes import INVALID_RULE, NOTHING_TO_FILTER, SEED_REQUIRED
from scoring.models import FilterRun
from tasks.error_codes import UNKNOWN_COMPONENT
from tasks.models import InstanceStatus, TaskInstance
from tasks.stel.majority import m_of_k_validated, stel_surplus_correct

SURPLUS_RULES = ("first", "stel")

UPDATE_CHUNK = 10_000
FILTER_RESAMPLES = 200


def balance_validated(*, validated: pd.DataFrame, seed: int | None,
                      groups: list[list[str]] | None = None) -> np.ndarray:
    """Instance ids to drop so that the components of each group keep as many validated instances as the group's
    smallest (STEL balanced its two dimensions only: formal 822 → 815 = simple's count). `groups=None` is one
    group of every component; a component in no group is left as it is. Groups and components are visited in
    order and ids sorted, so the draw is reproducible from the seed."""
    if validated.empty:
        return np.zeros(0, dtype=np.int64)
    sizes = validated.groupby("component")["instance_id"].size()
    rng = np.random.default_rng(seed)
    dropped = []
    for group in ([sorted(sizes.index)] if groups is None else groups):
        present = [name for name in sorted(set(group)) if name in sizes.index]
        if len(present) < 2:
            continue
        target = int(sizes[present].min())
        for name in present:
            ids = np.sort(validated.loc[validated["component"] == name, "instance_id"].to_numpy())
            excess = len(ids) - target
            if excess > 0:
                dropped.append(np.sort(rng.choice(ids, size=excess, replace=False)))
    return np.concatenate(dropped) if dropped else np.zeros(0, dtype=np.int64)


def surplus_stel_apply(*, items: pd.DataFrame, study: Study, k: int, m: int) -> tuple[pd.DataFrame, int]:
    """Decide the items with more than k valid responses by STEL's rule: n_correct = max(0, k − incorrect votes
    among all valid responses). Returns the table and how many items it changed the count of."""

    surplus = items["n_valid"].to_numpy() > k
    if not surplus.any():
        return items, 0
    responses = selectors.responses_frame(study_id=study.pk)
    valid = responses[responses["is_valid"] & ~responses["is_screening"]
                      & responses["item_id"].isin(items.loc[surplus, "item_id"])]
    correct_answer = items.set_index("item_id")["correct_answer"]
    wrong = valid["answer"].to_numpy() != correct_answer.reindex(valid["item_id"]).to_numpy()
    incorrect = pd.Series(wrong, index=valid["item_id"].to_numpy()).groupby(level=0).sum()
    n_incorrect = items["item_id"].map(incorrect).fillna(0).astype(np.int64).to_numpy()
    n_correct = np.where(surplus, stel_surplus_correct(n_incorrect, k), items["n_correct"].to_numpy())
    changed = int((n_correct != items["n_correct"].to_numpy()).sum())
    decision = items["decision"].to_numpy().copy()
    decidable = surplus & np.isin(decision, ["validated", "rejected"])
    decision[decidable] = np.where(m_of_k_validated(n_correct[decidable], m), "validated", "rejected")
    return items.assign(n_correct=n_correct, decision=decision), changed


def _counts(frame: pd.DataFrame, column: str) -> dict[str, dict[str, int]]:
    table = frame.groupby(["component", column]).size()
    out: dict[str, dict[str, int]] = {}
    for (component, value), count in table.items():
        out.setdefault(str(component), {})[str(value)] = int(count)
    return out


def _set_status(ids: np.ndarray, status: str) -> None:
    for start in range(0, len(ids), UPDATE_CHUNK):
        chunk = [int(i) for i in ids[start:start + UPDATE_CHUNK]]
        TaskInstance.objects.filter(pk__in=chunk).update(status=status)


def filter_rule_check(*, study: Study, min_correct: int | None, balance: bool, seed: int | None) -> int:
    """The filter's input, checked before anything is queued or stored; returns m."""
    k = study.annotators_per_item
    m = int(min_correct or study.min_correct)
    if not 1 <= m <= k:
        raise ApplicationError(f"Min correct must be between 1 and the study's annotators per item ({k}); got {m}.",
                               code=INVALID_RULE, details={"field": "min_correct"})
    rule = study_posterior_rule(study)
    if rule is not None and rule.fitted and min_correct is not None and int(min_correct) != study.min_correct:
        raise ApplicationError(
            f"Study '{study.slug}' decides its items by its posterior stop (validated when P(gold right) ≥ "
            f"{rule.stop:g} under the fitted parameters), not by m of k: a min correct of {min_correct} would not "
            "be applied; leave it out.", code=INVALID_RULE, details={"field": "min_correct"})
    if balance and seed is None:
        raise ApplicationError("Balancing removes instances at random: give a seed so it can be reproduced.",
                               code=SEED_REQUIRED, details={"field": "seed"})
    has_correct = StudyItem.objects.filter(study=study, instance__isnull=False).exclude(correct_answer="").exists()
    if not has_correct:
        raise ApplicationError(f"Study '{study.slug}' has no task instances with a correct answer to filter.",
                               code=NOTHING_TO_FILTER)
    return m


def filter_run_start(*, study: Study, min_correct: int | None = None, balance: bool = False,
                     balance_groups: list[list[str]] | None = None, surplus: str = "first",
                     seed: int | None = None, created_by: str = "") -> Job:
    """Check the rule, then queue the filter as a job (nothing is stored when the rule is refused)."""

    if surplus not in SURPLUS_RULES:
        raise ApplicationError(f"Surplus rule must be one of {', '.join(SURPLUS_RULES)}.", code=INVALID_RULE,
                               details={"field": "surplus"})
    balance = balance or bool(balance_groups)
    filter_rule_check(study=study, min_correct=min_correct, balance=balance, seed=seed)
    params = {"study": study.slug, "min_correct": min_correct, "balance": balance, "seed": seed,
              "balance_groups": balance_groups, "surplus": surplus}
    with transaction.atomic():
        job = job_create(kind="filter_instances", params=params, created_by=created_by)
        job_enqueue(job=job, task="scoring.filter_instances")
    return job


def instances_filter(
    *,
    study: Study,
    min_correct: int | None = None,
    balance: bool = False,
    balance_groups: list[list[str]] | None = None,
    surplus: str = "first",
    seed: int | None = None,
    created_by: str = "",
    job: Job | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FilterRun:
    """Decide every instance of the study with complete annotations; leave incomplete ones as they are.

    `balance_groups` (implies balance) balances only within each group of component names."""
    if job is not None:
        done = FilterRun.objects.filter(job=job).first()
        if done is not None:  # a redelivered task: the decision was made and recorded already
            return done
    k = study.annotators_per_item
    if surplus not in SURPLUS_RULES:
        raise ApplicationError(f"surplus rule {surplus!r}: one of {', '.join(SURPLUS_RULES)}", code=INVALID_RULE)
    balance = balance or bool(balance_groups)
    m = filter_rule_check(study=study, min_correct=min_correct, balance=balance, seed=seed)
    summary, per_item = agreement_compute(study=study, m=m, seed=seed or 0, resamples=FILTER_RESAMPLES,
                                          progress=progress)
    items = per_item[(per_item["instance_id"] >= 0) & (per_item["correct_answer"] != "")]
    if items.empty:
        raise ApplicationError(f"Study '{study.slug}' has no task instances with a correct answer to filter.",
                               code=NOTHING_TO_FILTER)
    statuses = dict(TaskInstance.objects.filter(pk__in=[int(i) for i in items["instance_id"]])
                    .values_list("pk", "status"))
    items = items.assign(status_before=items["instance_id"].map(statuses))
    # A withdrawn instance (its writer's data erased) is neither validated nor rejected again: it is gone.
    items = items[items["status_before"] != InstanceStatus.WITHDRAWN]
    surplus_changed = 0
    if surplus == "stel":
        items, surplus_changed = surplus_stel_apply(items=items, study=study, k=k, m=m)
    if balance_groups:
        known = set(items["component"])
        unknown = sorted({name for group in balance_groups for name in group} - known)
        if unknown:
            raise ApplicationError(f"Balance groups: component(s) {', '.join(unknown)} that the study does "
                                   f"not have (it has: {', '.join(sorted(known))})", code=UNKNOWN_COMPONENT,
                                   field="balance_groups")
    decided = items[items["decision"].isin(["validated", "rejected"])]
    validated = decided[decided["decision"] == "validated"]
    dropped = (balance_validated(validated=validated, seed=seed, groups=balance_groups) if balance
               else np.zeros(0, dtype=np.int64))
    keep = validated[~validated["instance_id"].isin(dropped)]
    rejected_ids = decided.loc[decided["decision"] == "rejected", "instance_id"].to_numpy()

    after = decided.assign(result=np.where(
        decided["instance_id"].isin(dropped), "balanced_away", decided["decision"]))
    with transaction.atomic():
        _set_status(keep["instance_id"].to_numpy(), InstanceStatus.VALIDATED)
        _set_status(np.concatenate([rejected_ids, dropped]), InstanceStatus.REJECTED)
        run = FilterRun.objects.create(
            study=study, min_correct=m, annotators_per_item=k, balance=balance, seed=seed,
            counts_before=json_safe({
                "decision": _counts(items, "decision"), "status": _counts(items, "status_before"),
            }),
            counts_after=json_safe(_counts(after, "result")),
            statistics=json_safe({
                "fleiss_kappa": summary.get("fleiss_kappa"), "fleiss_kappa_ci": summary.get("fleiss_kappa_ci"),
                "krippendorff_alpha": summary.get("krippendorff_alpha"),
                "krippendorff_alpha_ci": summary.get("krippendorff_alpha_ci"),
                "majority_accuracy": summary.get("majority_accuracy"),
                "components": {name: {key: stats.get(key) for key in
                                      ("fleiss_kappa", "fleiss_kappa_ci", "krippendorff_alpha",
                                       "krippendorff_alpha_ci", "majority_accuracy", "n_validated")}
                               for name, stats in summary.get("components", {}).items()},
                "irregular": summary.get("irregular", {}).get("notes", []),
                "balanced_away_instance_ids": [int(i) for i in dropped],
                "rule": filter_rule_text(study=study, m=m, k=k, surplus=surplus),
                "surplus": surplus, "surplus_items_changed": surplus_changed,
                "balance_groups": balance_groups,
            }),
            n_validated=len(keep), n_rejected=len(rejected_ids), n_balanced_away=len(dropped),
            n_incomplete=int((items["decision"] == "incomplete").sum()), created_by=created_by, job=job,
        )
    return run


def filter_rule_text(*, study: Study, m: int, k: int, surplus: str) -> str:
    """The decision rule a FilterRun applied, in words: m of k, or the study's fitted posterior stop (which the
    filter's decisions follow, scoring/agreement/stats/votes.py)."""
    rule = study_posterior_rule(study)
    if rule is not None and rule.fitted:
        fit = study.posterior_fit or {}
        text = (f"validated when the pooled one-coin posterior P(gold right) is at least {rule.stop:g} (vote "
                f"accuracy {rule.vote_accuracy:.4f}, share of right gold labels {rule.share_gold_right:.4f}, "
                f"fitted {fit.get('fitted_at', 'at an unrecorded time')}) from the first {k} valid responses")
    else:
        text = f"validated when at least {m} of the first {k} valid responses are correct"
    if surplus == "stel":
        text = text.replace(f"the first {k} valid responses", f"{k} valid responses") + \
            "; surplus responses removed correct ones first (STEL)"
    return text


def filter_run_summary(run: FilterRun) -> dict[str, Any]:
    return {
        "filter_run": run.pk, "study": run.study.slug, "min_correct": run.min_correct, "k": run.annotators_per_item,
        "balance": run.balance, "balance_groups": run.statistics.get("balance_groups"),
        "surplus": run.statistics.get("surplus", "first"),
        "surplus_items_changed": run.statistics.get("surplus_items_changed", 0), "seed": run.seed,
        "validated": run.n_validated, "rejected": run.n_rejected,
        "balanced_away": run.n_balanced_away, "incomplete": run.n_incomplete, "counts_before": run.counts_before,
        "counts_after": run.counts_after, "fleiss_kappa": run.statistics.get("fleiss_kappa"),
        "krippendorff_alpha": run.statistics.get("krippendorff_alpha"),
        "majority_accuracy": run.statistics.get("majority_accuracy"), "notes": run.statistics.get("irregular", []),
        "rule": run.statistics.get("rule"),
    }


def filter_run_execute(*, job: Job) -> dict[str, Any]:
    """Body of the Celery task: the job's row (its params) in, a FilterRun out (once per job)."""

    params = job.params
    run = instances_filter(
        study=study_get(slug=params["study"]), min_correct=params.get("min_correct"),
        balance=bool(params.get("balance")), balance_groups=params.get("balance_groups"),
        surplus=params.get("surplus", "first"), seed=params.get("seed"), created_by=job.created_by, job=job,
        progress=progress_for(job.pk, every=20),
    )
    return filter_run_summary(run)
