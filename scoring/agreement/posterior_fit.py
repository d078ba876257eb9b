"""The posterior stopping rule's parameters (tasks/stel/posterior.py), refitted on a study's answers so far.

A study with a posterior stop (`Study.posterior_stop`) decides its items by m of k until its pilot is in: until
`posterior_pilot_items` of its items are decided (closed by adaptive collection, or with their k answers). From then
on the refit job (`scoring.posterior_refit`, celery beat every 5 minutes, and `manage.py posterior_refit`) fits the
pooled one-coin model by EM (`scoring.agreement.uncertainty.pooled_parameters`) to the valid answers of every item
with a gold answer and at least one answer, stores the two parameters in `Study.posterior_fit` (with
`validates_at_margin`: the smallest lead of agreeing over disagreeing answers that passes the stop under this fit,
since the threshold acts in such steps), and rechecks every item's closure under them
(`annotation.services.adaptive.item_refresh_closed`: an item the new parameters no longer decide reopens, one they
now decide closes). The engine itself only does arithmetic on the stored parameters.

Fitting on answers that the rule itself stopped is sound: the rule looks only at the answers, so the stopping is
ignorable for the likelihood the EM maximises.
"""
from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Study, StudyItem
from annotation.services.adaptive import item_refresh_closed
from scoring.agreement.uncertainty import pooled_parameters
from tasks.stel.posterior import posterior_rule_of, posterior_validated


def study_item_counts(*, study: Study) -> list[dict[str, Any]]:
    """Per item with a gold answer: its valid agreeing (`correct`) and disagreeing (`wrong`) answers, and whether
    it is decided (closed, or k answers in)."""
    rows = (StudyItem.objects.filter(study=study).exclude(correct_answer="")
            .annotate(correct=Count("responses", filter=Q(responses__is_valid=True, responses__is_correct=True)),
                      wrong=Count("responses", filter=Q(responses__is_valid=True, responses__is_correct=False)))
            .values("id", "is_closed", "correct", "wrong"))
    k = study.annotators_per_item
    return [{**row, "decided": bool(row["is_closed"] or row["correct"] + row["wrong"] >= k)} for row in rows]


def posterior_refit(*, study: Study, force: bool = False) -> dict[str, Any]:
    """Refit the study's posterior-rule parameters once its pilot is decided (`force`: whatever the pilot), store
    them and recheck its items' closures. Returns what it did."""
    if study.posterior_stop is None:
        return {"study": study.slug, "fitted": False, "reason": "the study has no posterior stop"}
    counts = study_item_counts(study=study)
    decided = sum(row["decided"] for row in counts)
    if decided < study.posterior_pilot_items and not force:
        return {"study": study.slug, "fitted": False, "decided": decided,
                "reason": f"pilot not in: {decided} of {study.posterior_pilot_items} items decided"}
    answered = [row for row in counts if row["correct"] + row["wrong"] > 0]
    fit = pooled_parameters(n_correct=[row["correct"] for row in answered],
                            n_votes=[row["correct"] + row["wrong"] for row in answered])
    if fit is None:
        return {"study": study.slug, "fitted": False, "decided": decided, "reason": "no answers"}
    rule = posterior_rule_of(stop=study.posterior_stop, drop=study.posterior_drop, fit=fit)
    # the threshold acts in steps of c − w: say which step it is under this fit (None: the fit is not used)
    margin = next((d for d in range(study.annotators_per_item + 1)
                   if posterior_validated(d, 0, m=study.min_correct, rule=rule)), None) if rule.fitted else None
    fit = {**fit, "decided": decided, "validates_at_margin": margin,
           "fitted_at": timezone.now().isoformat(timespec="seconds")}
    Study.objects.filter(pk=study.pk).update(posterior_fit=fit)
    study.posterior_fit = fit
    changed = 0
    if study.adaptive_stopping:
        items = StudyItem.objects.filter(study=study).exclude(correct_answer="").select_related("study")
        for item in items.filter(pk__in=[row["id"] for row in answered]) | items.filter(is_closed=True):
            item.study = study
            before = item.is_closed
            changed += int(item_refresh_closed(item=item) != before)
    return {"study": study.slug, "fitted": True, **fit, "closures_changed": changed}


def posterior_refit_all() -> list[dict[str, Any]]:
    """The periodic refit: every active adaptive study with a posterior stop."""
    studies = Study.objects.filter(posterior_stop__isnull=False, adaptive_stopping=True, status=Study.Status.ACTIVE)
    return [posterior_refit(study=study) for study in studies.order_by("id")]
