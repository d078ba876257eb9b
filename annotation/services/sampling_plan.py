"""A sampling plan: how many instances of each component a study must annotate so that, at the expected
validation rate of each component, every component ends with the target number of validated instances.

STEL sampled more simplicity than formality items for annotation because it expected fewer of them to validate
(0.68 against 0.88). Rates are given, or measured on earlier studies: validated / (validated + rejected) among the
instances those studies showed (the status that `filter_instances` set).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django.db.models import Count, Q

from annotation.error_codes import MISSING_RATE
from annotation.models import Study, StudyItem
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from tasks.error_codes import INVALID_VALUE
from tasks.models import InstanceStatus, TaskInstance


def validation_rates_measure(*, studies: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per component: validated, rejected and their rate among the instances of the given studies."""
    found = set(Study.objects.filter(slug__in=studies).values_list("slug", flat=True))
    missing = [slug for slug in studies if slug not in found]
    if missing:
        raise ApplicationError(f"Rates from study: no study {', '.join(map(repr, missing))}", code=NOT_FOUND,
                               status=404, field="rates_from_studies")
    rows = (StudyItem.objects.filter(study__slug__in=studies, instance__isnull=False)
            .values("component__name")
            .annotate(validated=Count("instance", filter=Q(instance__status=InstanceStatus.VALIDATED), distinct=True),
                      rejected=Count("instance", filter=Q(instance__status=InstanceStatus.REJECTED), distinct=True)))
    out = {}
    for row in rows:
        decided = row["validated"] + row["rejected"]
        if decided:
            out[row["component__name"]] = {"validated": row["validated"], "rejected": row["rejected"],
                                           "rate": row["validated"] / decided}
    return out


def validation_rates_parse(entries: Sequence[str]) -> dict[str, float]:
    """`COMPONENT=RATE` entries (the command line's repeated option, the admin's comma-separated box) as a dict."""
    rates: dict[str, float] = {}
    for entry in entries:
        name, sep, value = entry.partition("=")
        try:
            rate = float(value)
        except ValueError:
            rate = None
        if not sep or not name.strip() or rate is None:
            raise ApplicationError(f"Validation rate {entry.strip()!r}: expected COMPONENT=RATE, e.g. simplicity=0.68.",
                                   code=INVALID_VALUE, field="validation_rates")
        rates[name.strip()] = rate
    return rates


def sampling_plan_compute(
    *, setup: str, components: Sequence[str], target_validated: int, rates: dict[str, float] | None = None,
    rates_from_studies: Sequence[str] = (), corpus: Sequence[str] | None = None, status: str | None = "candidate",
) -> dict[str, Any]:
    """{component: {rate, rate_source, sample, available, expected_validated}}; `sample` is ceil(target / rate),
    capped at the instances available (a shortfall is reported, not hidden)."""
    if target_validated < 1:
        raise ApplicationError("Target validated must be at least 1", code=INVALID_VALUE, field="target_validated")
    if not components:
        raise ApplicationError("a sampling plan needs the components (one or more)", code=INVALID_VALUE,
                               field="component")
    given = dict(rates or {})
    for name, rate in given.items():
        if not 0 < rate <= 1:
            raise ApplicationError(f"Validation rate {name}={rate}: a rate is in (0, 1]", code=INVALID_VALUE,
                                   field="validation_rates")
    measured = validation_rates_measure(studies=rates_from_studies) if rates_from_studies else {}
    available_qs = TaskInstance.objects.filter(setup=setup, component__name__in=components)
    if corpus:
        available_qs = available_qs.filter(corpus__name__in=corpus)
    if status:
        available_qs = available_qs.filter(status=status)
    available = dict(available_qs.values_list("component__name").annotate(n=Count("pk")))
    plan: dict[str, Any] = {}
    for name in components:
        if name in given:
            rate, source = given[name], "given"
        elif name in measured:
            rate, source = measured[name]["rate"], f"measured on {', '.join(rates_from_studies)}"
        else:
            raise ApplicationError(f"no validation rate for component {name!r}: give a validation rate "
                                   f"{name}=RATE or a study to take rates from with decided instances of it",
                                   code=MISSING_RATE, field="validation_rates")
        wanted = math.ceil(target_validated / rate - 1e-9)
        have = int(available.get(name, 0))
        sample = min(wanted, have)
        plan[name] = {"rate": round(rate, 4), "rate_source": source, "needed": wanted, "sample": sample,
                      "available": have, "expected_validated": round(sample * rate, 1),
                      "shortfall": max(0, wanted - have)}
    return {"target_validated": target_validated, "components": plan,
            "total": sum(entry["sample"] for entry in plan.values())}
