"""Publishing a study on its platform, in two explicit steps: the draft (Prolific: a study in UNPUBLISHED; MTurk: the
HIT type), then — only when asked — publishing it (Prolific: the PUBLISH transition; MTurk: the HIT).

The platform's ids are stored on the study as soon as they are known; a step already done is not done again, and a
creation whose outcome was unknown is looked for on the platform (a read) before anything is created again."""
from __future__ import annotations

import math
import uuid
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.error_codes import NO_ITEMS
from annotation.models import Study
from annotation.services.study_setup import study_platform_link
from core.errors import ApplicationError
from platforms.backends import backend_for
from platforms.backends.base import PlatformBackend, StudyPlan
from platforms.clients.errors import UNKNOWN, PlatformCallError
from platforms.error_codes import (
    BASE_URL_MISSING,
    BUSY,
    DRAFT_EXISTS,
    EMPTY_ALLOW_LIST,
    NO_DRAFT,
    REWARD_BELOW_MINIMUM,
    STUDY_NOT_OPEN,
)
from platforms.models import PlatformAccount, PlatformStudy
from platforms.services.accounts import platform_study_for
from platforms.services.lists import allow_list_ensure, allow_list_members, block_list_ensure
from platforms.services.preflight import preflight_of
from platforms.services.recruit_language import language_filter_checked, language_filters

STALE = timedelta(minutes=10)  # a creating/publishing step older than this lost its runner: outcome unknown
DEVICES = ("desktop", "tablet", "mobile")


def places_for(study: Study) -> int:
    """One place per batch the study needs: k slots for every item, `items_per_batch` slots per batch."""
    items = study.items.filter(is_closed=False).count()
    return max(1, math.ceil(items * study.annotators_per_item / max(1, study.items_per_batch)))


def reward_cents_for(study: Study) -> int:
    """The reward of one place at the study's hourly pay target for its estimated minutes."""
    reward = Decimal(str(study.target_hourly_pay)) * Decimal(study.estimated_minutes) / 60 * 100
    return int(reward.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def _participant_url(study: Study, base_url: str) -> str:
    base = (base_url or settings.STYLECROWD_PUBLIC_URL or "").rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ApplicationError("Base URL: the address participants reach this server at is needed for the "
                               "platform's link (set STYLECROWD_PUBLIC_URL, or give a base URL such as "
                               "https://crowd.example.org).", code=BASE_URL_MISSING, field="base_url")
    return f"{base}/s/{study.slug}/"


def _devices(devices: list[str] | None) -> list[str]:
    devices = list(devices or [])
    bad = [d for d in devices if d not in DEVICES]
    if bad:
        raise ApplicationError(f"Devices: {', '.join(bad)} not among {', '.join(DEVICES)}.", field="devices")
    return devices


def _filters(filters: list[Any], platform_study: PlatformStudy) -> list[Any]:
    if not isinstance(filters, list) or not all(isinstance(f, dict) and f for f in filters):
        raise ApplicationError("Filters: a JSON list of filter objects (Prolific: {filter_id, selected_values} "
                               "or {filter_id, selected_range}; MTurk: QualificationRequirements).",
                               field="filters")
    backend_for(platform_study.account).filters_check(filters)  # each platform's own shape of a filter
    return filters


def _allow_list(allow_list: dict[str, Any], platform_study: PlatformStudy) -> dict[str, Any]:
    allowed = {"participants", "accepted_writers_of", "min_accepted"}
    if not isinstance(allow_list, dict) or set(allow_list) - allowed:
        raise ApplicationError(f"Allow list: an object with {', '.join(sorted(allowed))}.", field="allow_list")
    if allow_list and not allow_list_members(platform_study=PlatformStudy(
            study=platform_study.study, platform=platform_study.platform, allow_list=allow_list)):
        raise ApplicationError("Allow list: it holds nobody (no named participant, no accepted writer), so nobody "
                               "could take part.", code=EMPTY_ALLOW_LIST, field="allow_list")
    return allow_list


def _bonus_cap(name: str, value: Decimal) -> Decimal:
    if Decimal(value) <= 0:
        raise ApplicationError(f"{name.replace('_', ' ').capitalize()}: must be positive.", field=name)
    return Decimal(value)


def publish_settings_save(*, platform_study: PlatformStudy, devices: list[str] | None = None,
                          filters: list[Any] | None = None, allow_list: dict[str, Any] | None = None,
                          screen_out_reward_cents: int | None = None, use_block_list: bool | None = None,
                          bonus_cap_per_participant: Decimal | None = None,
                          bonus_cap_per_study: Decimal | None = None,
                          language_filter: str | None = None) -> PlatformStudy:
    """Settings of the platform study, changeable until the draft exists."""
    changes: dict[str, Any] = {}
    if devices is not None:
        changes["devices"] = _devices(devices)
    if filters is not None:
        changes["filters"] = _filters(filters, platform_study)
    if allow_list is not None:
        changes["allow_list"] = _allow_list(allow_list, platform_study)
    if screen_out_reward_cents is not None:
        if screen_out_reward_cents < 0:
            raise ApplicationError("Screen-out reward: must not be negative.", field="screen_out_reward")
        changes["screen_out_reward_cents"] = screen_out_reward_cents
    if use_block_list is not None:
        changes["use_block_list"] = use_block_list
    if language_filter is not None:
        changes["language_filter"] = language_filter_checked(language_filter)
    for name, value in (("bonus_cap_per_participant", bonus_cap_per_participant),
                        ("bonus_cap_per_study", bonus_cap_per_study)):
        if value is not None:
            changes[name] = _bonus_cap(name, value)
    if not changes:
        return platform_study
    frozen = {"devices", "filters", "allow_list", "screen_out_reward_cents", "use_block_list", "language_filter"}
    if platform_study.state != PlatformStudy.State.NONE and frozen & set(changes):
        raise ApplicationError(f"Study {platform_study.study.slug}: its draft exists on the platform; change its "
                               "devices, filters and lists there.", code=DRAFT_EXISTS, status=409)
    PlatformStudy.objects.filter(pk=platform_study.pk).update(**changes)
    platform_study.refresh_from_db()
    return platform_study


def study_plan(*, platform_study: PlatformStudy, base_url: str = "", key: str) -> StudyPlan:
    """What the draft is created with; refused in plain words when the study cannot be run."""
    study = platform_study.study
    if study.status != Study.Status.ACTIVE:
        raise ApplicationError(f"Study {study.slug} is {study.status}: open it first (it must be active before "
                               "participants arrive from the platform).", code=STUDY_NOT_OPEN, status=409)
    if not study.items.exists():
        raise ApplicationError(f"Study {study.slug} has no items.", code=NO_ITEMS, status=409)
    currency = platform_study.currency
    reward = reward_cents_for(study)
    if reward < 1:
        raise ApplicationError("Reward: the study's pay target gives nothing per place.", code=REWARD_BELOW_MINIMUM,
                               field="target_hourly_pay")
    backend = backend_for(platform_study.account)
    maximum, screen_out = backend.plan_terms(
        reward_cents=reward, currency=currency, estimated_minutes=study.estimated_minutes,
        time_limit_minutes=study.batch_time_limit_minutes,
        screen_out_reward_cents=platform_study.screen_out_reward_cents)
    description = study.task_description or study.title or study.slug
    labels = ["writing_task"] if study.item_kind == "rewrite" else ["annotation"]
    try:
        filters, recruited = language_filters(platform_study=platform_study, backend=backend,
                                          filters=list(platform_study.filters))
    finally:
        backend.close()
    return StudyPlan(
        title=study.title or study.slug, description=backend.description_text(description),
        participant_url=_participant_url(study, base_url), places=places_for(study), reward_cents=reward,
        currency=currency, estimated_minutes=study.estimated_minutes, maximum_minutes=maximum,
        completion_code=study.completion_code, screened_out_code=study.screened_out_code,
        screen_out_reward_cents=screen_out, return_code=platform_study.return_code,
        max_submissions_per_participant=study.max_batches_per_participant, devices=list(platform_study.devices),
        filters=filters, block_list_id=platform_study.account.block_list_id
        if platform_study.use_block_list else "", allow_list_id=platform_study.allow_list_id, labels=labels,
        idempotency_key=key, slug=study.slug, project_id=platform_study.account.project_id,
        keywords="stylecrowd, annotation, language", notes=[recruited["note"]],
        recruitment_language=recruited)


def platform_preflight(*, platform_study: PlatformStudy, base_url: str = "") -> dict[str, Any]:
    """The pre-flight (services/preflight.py) of the study as it would be created, or was (its draft's settings)."""
    plan = study_plan(platform_study=platform_study, base_url=base_url, key=platform_study.create_key or "preflight")
    backend = backend_for(platform_study.account)
    try:
        return {"study": platform_study.study.slug, "language": plan.notes,
                **preflight_of(backend=backend, plan=plan)}
    finally:
        backend.close()


def _claim(platform_study: PlatformStudy, *, frm: list[str], to: str, **fields: Any) -> bool:
    """Move the platform study from one of `frm` to `to` in its own committed transaction: only one runner wins."""
    with transaction.atomic():
        return PlatformStudy.objects.filter(pk=platform_study.pk, state__in=frm).update(state=to, **fields) == 1


def _stale_to_unknown(platform_study: PlatformStudy) -> None:
    """A creating/publishing step that lost its runner (a killed worker) becomes an unknown outcome."""
    cutoff = timezone.now() - STALE
    moves = {PlatformStudy.State.CREATING: PlatformStudy.State.CREATE_UNKNOWN,
             PlatformStudy.State.PUBLISHING: PlatformStudy.State.PUBLISH_UNKNOWN}
    if platform_study.state in moves and platform_study.synced_at and platform_study.synced_at < cutoff:
        PlatformStudy.objects.filter(pk=platform_study.pk, state=platform_study.state).update(
            state=moves[platform_study.state])
        platform_study.refresh_from_db()


def platform_publish(
    *, study: Study, account: PlatformAccount | None = None, base_url: str = "", publish: bool = False,
    created_by: str = "", **settings_: Any,
) -> dict[str, Any]:
    """Create the draft on the platform (once), and with `publish`, publish it (once). Returns the summary."""
    existed = PlatformStudy.objects.filter(study=study).exists()
    platform_study = platform_study_for(study=study, account=account)
    try:
        return _publish_steps(platform_study, base_url=base_url, publish=publish, settings_=settings_)
    except ApplicationError:
        # A first attempt refused before anything reached the platform leaves nothing behind.
        if not existed:
            PlatformStudy.objects.filter(pk=platform_study.pk, state=PlatformStudy.State.NONE, create_key="",
                                         external_id="").delete()
        raise


def _publish_steps(platform_study: PlatformStudy, *, base_url: str, publish: bool,
                   settings_: dict[str, Any]) -> dict[str, Any]:
    platform_study = publish_settings_save(platform_study=platform_study, **settings_)
    _stale_to_unknown(platform_study)
    backend = backend_for(platform_study.account)
    steps: list[str] = []
    extra: dict[str, Any] = {}
    try:
        if platform_study.state in (PlatformStudy.State.NONE, PlatformStudy.State.CREATE_UNKNOWN,
                                    PlatformStudy.State.CREATING):
            _draft(platform_study, backend, base_url=base_url, steps=steps, extra=extra)
        elif platform_study.state in (PlatformStudy.State.DRAFT, PlatformStudy.State.PUBLISHED):
            steps.append("draft exists")
        if publish:
            _publish(platform_study, backend, base_url=base_url, steps=steps)
    finally:
        backend.close()
    platform_study.refresh_from_db()
    return {**_summary(platform_study, steps), **extra}


def _summary(platform_study: PlatformStudy, steps: list[str]) -> dict[str, Any]:
    return {"study": platform_study.study.slug, "platform": platform_study.platform,
            "account": platform_study.account.name, "state": platform_study.state,
            "external_id": platform_study.external_id, "places": platform_study.places,
            "reward": f"{Decimal(platform_study.reward_cents) / 100:.2f}", "currency": platform_study.currency,
            "steps": steps, "sent": platform_study.create_request}


def _draft(platform_study: PlatformStudy, backend: PlatformBackend, *, base_url: str, steps: list[str],
           extra: dict[str, Any]) -> None:
    if platform_study.state == PlatformStudy.State.CREATING:
        raise ApplicationError(f"Study {platform_study.study.slug}: its draft is being created by another run.",
                               code=BUSY, status=409)
    if platform_study.state == PlatformStudy.State.CREATE_UNKNOWN:
        found = backend.find_created(platform_study.create_key, platform_study)
        if found:
            _created(platform_study, backend, found)
            steps.append("draft found on the platform after an unknown outcome")
            return
        steps.append("the earlier creation did not reach the platform")
    key = platform_study.create_key or uuid.uuid4().hex
    if platform_study.use_block_list:
        block_list_ensure(account=platform_study.account, backend=backend)
        platform_study.account.refresh_from_db()
    if platform_study.allow_list:
        allow_list_ensure(platform_study=platform_study, backend=backend)
        platform_study.refresh_from_db()
    plan = study_plan(platform_study=platform_study, base_url=base_url, key=key)
    extra["language"] = plan.notes
    extra["preflight"] = preflight_of(backend=backend, plan=plan)  # cost and eligible people, before any draft
    call = backend.draft_call(plan)
    if backend.CREATES_ON_PUBLISH:
        response = backend.send(call)  # a template (MTurk's HIT type) is idempotent: the same settings, the same one
        PlatformStudy.objects.filter(pk=platform_study.pk).update(
            state=PlatformStudy.State.DRAFT, create_key=key, create_request=call.describe(),
            recruitment_language=plan.recruitment_language,
            hit_type_id=backend.draft_ref(response), places=plan.places, reward_cents=plan.reward_cents,
            last_error="")
        steps.append("HIT type created (the HIT is created on publish)")
        return
    # The key and exactly what is sent are stored, committed, before the call.
    if not _claim(platform_study, frm=[PlatformStudy.State.NONE, PlatformStudy.State.CREATE_UNKNOWN],
                  to=PlatformStudy.State.CREATING, create_key=key, create_request=call.describe(),
                  recruitment_language=plan.recruitment_language,
                  places=plan.places, reward_cents=plan.reward_cents, synced_at=timezone.now()):
        raise ApplicationError(f"Study {platform_study.study.slug}: its draft is being created by another run.",
                               code=BUSY, status=409)
    try:
        response = backend.send(call)
    except PlatformCallError as exc:
        state = PlatformStudy.State.CREATE_UNKNOWN if exc.outcome == UNKNOWN else PlatformStudy.State.NONE
        note = (" Run the same command again: StyleCrowd first looks for the draft on the platform (a read) and "
                "creates nothing twice.") if exc.outcome == UNKNOWN else ""
        PlatformStudy.objects.filter(pk=platform_study.pk).update(state=state, last_error=exc.message + note)
        exc.message += note
        raise
    _created(platform_study, backend, backend.created_id(response))
    steps.append("draft created")


def _study_link(platform_study: PlatformStudy, backend: PlatformBackend, external_id: str = "") -> None:
    """The study takes the platform's links only (the mock's people come by the anonymous link: left as it is)."""
    if backend.LINKS_STUDY:
        study_platform_link(study=platform_study.study, platform=platform_study.platform,
                            prolific_study_id=backend.entry_study_id(external_id))


def _created(platform_study: PlatformStudy, backend: PlatformBackend, external_id: str) -> None:
    PlatformStudy.objects.filter(pk=platform_study.pk).update(
        state=PlatformStudy.State.DRAFT, external_id=external_id, external_status="UNPUBLISHED", last_error="")
    _study_link(platform_study, backend, external_id)
    platform_study.refresh_from_db()


def _publish(platform_study: PlatformStudy, backend: PlatformBackend, *, base_url: str, steps: list[str]) -> None:
    platform_study.refresh_from_db()
    state = platform_study.state
    if state == PlatformStudy.State.PUBLISHED:
        steps.append("already published")
        return
    if state == PlatformStudy.State.PUBLISHING:
        raise ApplicationError(f"Study {platform_study.study.slug} is being published by another run.", code=BUSY,
                               status=409)
    if state == PlatformStudy.State.PUBLISH_UNKNOWN:
        if _published_after_unknown(platform_study, backend):
            steps.append("found published on the platform after an unknown outcome")
            return
        steps.append("the earlier publish did not take effect")
    elif state != PlatformStudy.State.DRAFT:
        raise ApplicationError(f"Study {platform_study.study.slug}: no draft to publish ({state}).",
                               code=NO_DRAFT, status=409)
    plan = study_plan(platform_study=platform_study, base_url=base_url, key=platform_study.create_key) \
        if backend.CREATES_ON_PUBLISH else None
    call = backend.publish_call(platform_study, plan)
    if not _claim(platform_study, frm=[PlatformStudy.State.DRAFT, PlatformStudy.State.PUBLISH_UNKNOWN],
                  to=PlatformStudy.State.PUBLISHING, synced_at=timezone.now()):
        raise ApplicationError(f"Study {platform_study.study.slug} is being published by another run.", code=BUSY,
                               status=409)
    try:
        response = backend.send(call)
    except PlatformCallError as exc:
        state = PlatformStudy.State.PUBLISH_UNKNOWN if exc.outcome == UNKNOWN else PlatformStudy.State.DRAFT
        PlatformStudy.objects.filter(pk=platform_study.pk).update(state=state, last_error=exc.message)
        raise
    fields: dict[str, Any] = {"state": PlatformStudy.State.PUBLISHED, "published_at": timezone.now(),
                              "last_error": ""}
    fields["external_status"] = backend.published_status(response)
    if backend.CREATES_ON_PUBLISH:
        fields["external_id"] = backend.created_id(response)
    PlatformStudy.objects.filter(pk=platform_study.pk).update(**fields)
    if backend.CREATES_ON_PUBLISH:
        _study_link(platform_study, backend)
    steps.append("published")


def _published_after_unknown(platform_study: PlatformStudy, backend: PlatformBackend) -> bool:
    """Read what the platform says after an unknown publish; True when it is published (state recorded)."""
    if backend.CREATES_ON_PUBLISH:
        found = backend.find_created(platform_study.create_key, platform_study)
        if found:
            PlatformStudy.objects.filter(pk=platform_study.pk).update(
                state=PlatformStudy.State.PUBLISHED, external_id=found, published_at=timezone.now())
            _study_link(platform_study, backend)
            return True
        return False
    status = backend.study_status(platform_study)
    if status and status != "UNPUBLISHED":
        PlatformStudy.objects.filter(pk=platform_study.pk).update(
            state=PlatformStudy.State.PUBLISHED, external_status=status, published_at=timezone.now())
        return True
    PlatformStudy.objects.filter(pk=platform_study.pk).update(state=PlatformStudy.State.DRAFT)
    return False
