"""Erasure on request, the platforms app's tables, and what a tombstone changes here afterwards.

What the platform needs for money stays: submissions, decisions and bonus ledger rows keep their amounts, states and
the platform's own references (submission ids, bulk bonus ids), with the worker id replaced by the person key
(core.pseudonyms.person_key). Text that merely mentions the id (webhook payloads, the csv of a bulk bonus, message
recipients) is rewritten by core's sweep of every text column. After the erasure a sync or a webhook that speaks of
the person stores only the person key (`erased_worker_id`, `erased_scrub`).
Registered with core's erasure (core/erasure.py) by PlatformsConfig.ready().
"""
from __future__ import annotations

from typing import Any

from core.erasure import ErasurePart, ErasureTarget, erased_person_keys
from core.id_sweep import replacer
from core.pseudonyms import person_key
from platforms.backends import platforms_of_people
from platforms.models import BonusPayment, Decision, PlatformSubmission


def _scrub(value: Any, external_id: str, replacement: str) -> Any:
    return replacer({external_id: replacement})(value)


def platform_worker_erase(target: ErasureTarget) -> ErasurePart:
    part = ErasurePart()
    platforms = platforms_of_people(target.platform)  # the mock's people are anonymous-link participants
    submissions = PlatformSubmission.objects.filter(platform_study__platform__in=platforms,
                                                    worker_id=target.external_id)
    for row in submissions.select_related("platform_study"):
        part.study_ids.add(row.platform_study.study_id)
        PlatformSubmission.objects.filter(pk=row.pk).update(
            worker_id=target.person_key, raw=_scrub(row.raw, target.external_id, target.person_key))
        part.counts["platforms.PlatformSubmission"] = part.counts.get("platforms.PlatformSubmission", 0) + 1
    for model in (Decision, BonusPayment):
        rows = model.objects.filter(platform_study__platform__in=platforms, worker_id=target.external_id)
        part.study_ids |= set(rows.values_list("platform_study__study_id", flat=True))
        part.counts[model._meta.label] = rows.update(worker_id=target.person_key)
    return part


def erased_worker_id(*, platform: str, worker_id: str) -> str:
    """The id to store for a worker the platform reports: their person key once they asked for erasure."""
    if worker_id and erased_person_keys(external_ids=[worker_id], platforms=[platform]):
        return person_key(platform=platform, external_id=worker_id)
    return worker_id


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(_strings(k) | _strings(v) for k, v in value.items())) if value else set()
    return set()


def erased_scrub(*, platform: str, value: Any) -> Any:
    """`value` (a webhook payload, a submission's raw body) with every erased person's raw id replaced by their
    person key."""
    return replacer(erased_person_keys(external_ids=_strings(value), platforms=[platform]))(value)
