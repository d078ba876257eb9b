"""The platform's part of a study's overview page (annotation/admin/overview.py, which never imports platforms):
the publish, sync, decisions and bonuses steps, the money (places × reward, the platform's estimated fee, bonuses
paid / owed / unknown, effective hourly pay against the platform's floor) and the unknown outcomes a person must
resolve, each linking to the ledger where that is done."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.urls import reverse

from annotation.models import EntryPlatform, Study
from annotation.overview import Figure, Notice, OverviewPart, Step, overview_section_register
from annotation.selectors import study_pay
from core.permissions import user_may
from platforms.models import BonusPayment, Decision, PlatformStudy
from platforms.selectors import study_platform_overview


def _by_links(study: Study) -> bool:
    """Publishing through StyleCrowd is optional for an open-link study, and for one whose people already come by
    its links (pasted into the platform by hand)."""
    return study.platform == EntryPlatform.ANY or study.participants.exists()


def _steps(study: Study, facts: dict[str, Any] | None, user: Any) -> list[Step]:
    platform_study: PlatformStudy | None = facts["platform_study"] if facts else None
    may_add, may_spend = user_may(user, PlatformStudy, "add"), user_may(user, PlatformStudy, "spend")
    published = platform_study is not None and platform_study.state == PlatformStudy.State.PUBLISHED
    drafted = platform_study is not None and platform_study.state != PlatformStudy.State.NONE
    steps = [Step("publish", "Publish on the platform" if drafted else "Create the platform draft",
                  reverse("admin:platforms_platformstudy_publish", args=[study.pk]), done=published,
                  available=may_add, optional=platform_study is None and _by_links(study),
                  note="" if may_add else "needs the permission to add platform studies")]
    if platform_study is None or not platform_study.external_id:
        return steps + [Step(key, label, "", available=False, note="after publishing")
                        for key, label in (("sync", "Sync submissions"), ("decisions", "Decisions"),
                                           ("bonuses", "Bonuses"))]
    bonuses = facts["bonuses"] if facts else {}
    owed = bonuses.get("pending", Decimal(0))
    return steps + [
        Step("sync", "Sync submissions", reverse("admin:platforms_platformstudy_sync", args=[platform_study.pk]),
             method="post", done=platform_study.synced_at is not None,
             available=user_may(user, PlatformStudy, "change")),
        Step("decisions", "Decisions", reverse("admin:platforms_platformstudy_decide", args=[platform_study.pk]),
             done=bool(facts and facts["decisions_sent"]), available=may_spend or user_may(user, Decision, "view"),
             note="" if may_spend else "sending needs the permission to spend"),
        Step("bonuses", "Bonuses", reverse("admin:platforms_platformstudy_bonus", args=[platform_study.pk]),
             done=bool(bonuses.get("rows")) and not owed, optional=not bonuses.get("rows"),
             available=may_spend or user_may(user, BonusPayment, "view")),
    ]


def _money(study: Study, facts: dict[str, Any]) -> tuple[list[Figure], list[Notice]]:
    currency, bonuses = facts["currency"], facts["bonuses"]
    rows = [Figure("places × reward", f"{facts['places']} × {facts['reward']:.2f} = {facts['rewards']:.2f} {currency}"),
            Figure("platform fee (estimate)", f"{facts['fee']:.2f} {currency} ({facts['fee_rate'] * 100:.1f} % of "
                                              "rewards and bonuses)")]
    rows += [Figure(f"bonuses {label}", f"{bonuses.get(key, Decimal(0)):.2f} {currency}",
                    warning="check on the platform" if key == "unknown" and bonuses.get(key) else "")
             for key, label in (("paid", "paid"), ("pending", "owed, not paid yet"), ("unknown", "outcome unknown"))]
    notices = []
    floor, effective = facts["hourly_floor"], study_pay(study=study)["effective_hourly_pay"]
    if floor is not None and effective is not None and Decimal(str(effective)) < floor:
        text = f"under the platform's floor of {floor:.2f} {currency}/h"
        rows.append(Figure("effective hourly pay against the platform", f"{effective:.2f} {currency}/h",
                           warning=text))
        notices.append(Notice(f"Effective hourly pay {effective:.2f} {currency}/h is {text}: sessions take longer "
                              "than estimated. Raise the reward (pay a bonus) or the estimate.",
                              url=reverse("admin:platforms_platformstudy_bonus", args=[facts["platform_study"].pk]),
                              link="Bonuses"))
    return rows, notices


def _unknown_notices(facts: dict[str, Any]) -> list[Notice]:
    ps = facts["platform_study"]
    of_study = f"&platform_study__id__exact={ps.pk}"
    found = [(facts["decisions_unknown"], "decision", "admin:platforms_decision_changelist", of_study),
             (BonusPayment.objects.filter(platform_study=ps, state=BonusPayment.State.UNKNOWN).count(),
              "bonus payment", "admin:platforms_bonuspayment_changelist", of_study),
             (facts["messages_unknown"], "message", "admin:platforms_platformmessage_changelist", "")]
    return [Notice(f"{n} {what}{'' if n == 1 else 's'} with an unknown outcome: the call may have reached the "
                   "platform. Check on the platform, then resolve each in the ledger (nothing is sent again by "
                   "itself).", url=f"{reverse(url)}?state__exact=unknown{filters}", link=f"resolve the {what}s")
            for n, what, url, filters in found if n]


def platforms_section(*, study: Study, user: Any) -> OverviewPart:
    facts = study_platform_overview(study=study)
    part = OverviewPart(steps=_steps(study, facts, user))
    if facts is None:
        return part
    part.money, part.warnings = _money(study, facts)
    part.warnings += _unknown_notices(facts)
    part.people = [("who returned or timed out", facts["left"])]
    return part


overview_section_register("platforms", platforms_section)

