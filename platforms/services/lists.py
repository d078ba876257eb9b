"""Block and allow lists kept on the platform, so that people are kept out before they take a place (not refused
with a 403 once inside): a Prolific participant group used as the study's blocklist/allowlist filter, an MTurk
qualification type the HIT excludes/requires.

The block list is the account's: every worker StyleCrowd has blocked on that platform (annotation's WorkerBlock,
set from the review queue's Block button), kept in sync when a researcher blocks or unblocks someone. An allow list
is a study's: named people, and/or the writers whose rewrites were accepted in earlier studies."""
from __future__ import annotations

from typing import Any

from annotation.models import Participant, Study, WorkerBlock
from annotation.services.rewrite_corpus import accepted_rewrites
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.pseudonyms import is_pseudonym
from platforms.backends import backend_for, people_platform
from platforms.backends.base import PlatformBackend
from platforms.error_codes import EMPTY_ALLOW_LIST
from platforms.models import PlatformAccount, PlatformStudy


def block_list_members(*, platform: str) -> set[str]:
    """The raw ids of the blocked workers: a block whose id retention replaced by a person key stays in force at
    StyleCrowd's door, but the platform cannot be told of it."""
    return {worker for worker in WorkerBlock.objects.filter(platform=platform).values_list("external_id", flat=True)
            if not is_pseudonym(worker)}


def account_learned_save(*, account: PlatformAccount, backend: PlatformBackend) -> None:
    """Store what a backend learned for the account while calling (Prolific: the token's only workspace): backends
    never write to the database themselves."""
    learned = backend.account_learned()
    if learned:
        PlatformAccount.objects.filter(pk=account.pk).update(**learned)
        for name, value in learned.items():
            setattr(account, name, value)


def block_list_ensure(*, account: PlatformAccount, backend: PlatformBackend) -> str:
    """The account's block list on the platform, made with the current members if it does not exist yet."""
    if account.block_list_id:
        return account.block_list_id
    list_id = backend.list_create(
        name="StyleCrowd block list", description="Workers blocked in StyleCrowd; kept in sync by StyleCrowd.",
        members=sorted(block_list_members(platform=account.platform)))
    account_learned_save(account=account, backend=backend)
    PlatformAccount.objects.filter(pk=account.pk).update(block_list_id=list_id)
    account.block_list_id = list_id
    return list_id


def block_list_sync(*, account: PlatformAccount, backend: PlatformBackend | None = None) -> dict[str, Any]:
    """Make the platform's block list equal to StyleCrowd's blocked workers (membership calls are idempotent)."""

    own = backend is None
    backend = backend or backend_for(account)
    try:
        if not account.block_list_id:
            block_list_ensure(account=account, backend=backend)
            return {"account": account.name, "list": account.block_list_id, "created": True,
                    "members": len(block_list_members(platform=account.platform))}
        changes = backend.list_sync(account.block_list_id, block_list_members(platform=account.platform))
    finally:
        if own:
            backend.close()
    return {"account": account.name, "list": account.block_list_id, "created": False, **changes}


def allow_list_members(*, platform_study: PlatformStudy) -> set[str]:
    rule = platform_study.allow_list or {}
    members = {str(p) for p in rule.get("participants") or []}
    studies = rule.get("accepted_writers_of") or []
    if studies:
        minimum = int(rule.get("min_accepted") or 1)

        found = list(Study.objects.filter(slug__in=studies))
        missing = sorted(set(studies) - {s.slug for s in found})
        if missing:
            raise ApplicationError(f"Allow list: no study {', '.join(missing)}.", code=NOT_FOUND, status=404,
                                   field="allow_list")
        counts: dict[str, int] = {}
        for study in found:
            for response in accepted_rewrites(study=study):
                if response.participant.platform == people_platform(platform_study.platform) and not is_pseudonym(
                        response.participant.external_id):  # a writer past retention cannot be named to the platform
                    worker = response.participant.external_id
                    counts[worker] = counts.get(worker, 0) + 1
        members |= {worker for worker, n in counts.items() if n >= minimum}
    blocked = block_list_members(platform=platform_study.platform)
    return members - blocked


def allow_list_ensure(*, platform_study: PlatformStudy, backend: PlatformBackend) -> str:
    members = allow_list_members(platform_study=platform_study)
    if not members:
        raise ApplicationError("Allow list: it holds nobody (no named participant, no accepted writer), so nobody "
                               "could take part.", code=EMPTY_ALLOW_LIST, field="allow_list")
    if platform_study.allow_list_id:
        backend.list_sync(platform_study.allow_list_id, members)
        return platform_study.allow_list_id
    list_id = backend.list_create(name=f"StyleCrowd allow list: {platform_study.study.slug}",
                                  description="Who may take this StyleCrowd study; kept in sync by StyleCrowd.",
                                  members=sorted(members))
    account_learned_save(account=platform_study.account, backend=backend)
    PlatformStudy.objects.filter(pk=platform_study.pk).update(allow_list_id=list_id)
    platform_study.allow_list_id = list_id
    return list_id


def known_people(*, platform: str) -> int:
    return Participant.objects.filter(platform=platform).values("external_id").distinct().count()
