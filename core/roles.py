"""The four roles of a StyleCrowd team, as Django groups of model permissions (the permissions every door asks
for: the admin, the API, the commands' admin twins). `python manage.py create_roles` creates or updates them; the
README's "Permissions" lists them with the names the admin's permission picker shows.

- researcher: view, add and change everything of the project's apps (corpora, studies, platforms, scoring, jobs).
  Not the permission to spend (`platforms.spend_platformstudy`: decisions, bonuses, messages), given on its own to
  those who hold the budget; not delete.
- reviewer: view everything; decide rewrites in the review queue (and block writers), measure writing signals,
  accept or reject content errors and number-substitution candidates.
- viewer: view everything, start and change nothing.
- data steward: view everything, and see personal data (`core.view_personal_data`: raw platform ids, persona answers,
  telemetry detail) and the log of who saw it (`core.view_personaldataaccess`). No other role holds either: the
  researcher, reviewer and viewer see keyed pseudonyms, so a person who must see raw data is given this role besides.
App labels only (core imports no app): the permissions are read by app label and codename.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Q

from core.error_codes import NOT_FOUND
from core.errors import ApplicationError

PROJECT_APPS = ("tasks", "annotation", "platforms", "scoring", "core")
# Seeing personal data, and the log of every look at it, are given only by name (the data steward's `extra`), never
# by an action: "view" would otherwise match `core.view_personal_data` and the access log's view permission.
PERSONAL_DATA_PERMISSIONS = ("core.view_personal_data", "core.view_personaldataaccess")
# The log is written by the doors only; the admin reads "change" as a licence to view, so no role gets it either.
ACCESS_LOG_WRITES = ("core.add_personaldataaccess", "core.change_personaldataaccess",
                     "core.delete_personaldataaccess")


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    actions: tuple[str, ...]  # on every model of the project's apps
    extra: tuple[str, ...] = ()  # "app_label.codename"
    # matched by `actions` but never given through them (the personal-data ones only as an `extra`)
    withheld: tuple[str, ...] = PERSONAL_DATA_PERMISSIONS + ACCESS_LOG_WRITES


ROLES: tuple[Role, ...] = (
    Role("researcher", "imports corpora, creates and runs studies, computes agreement, filters, exports and scores",
         actions=("view", "add", "change")),
    Role("reviewer", "reviews rewrites and content errors; sees everything else", actions=("view",),
         extra=("annotation.change_rewritereview", "annotation.add_writingsignal", "scoring.change_contenterror",
                "tasks.change_numbersubstitutioncandidate")),
    Role("viewer", "sees everything, starts and changes nothing", actions=("view",)),
    Role("data steward", "sees personal data (raw platform ids, persona answers, telemetry detail) and its access "
         "log; given besides another role", actions=("view",), extra=PERSONAL_DATA_PERMISSIONS),
)


def role_permissions(role: Role) -> list[Permission]:
    """The role's permissions; an `extra` the database does not hold is an error (a renamed model)."""
    project = Permission.objects.filter(content_type__app_label__in=PROJECT_APPS)
    wanted = project.filter(codename__regex=rf"^({'|'.join(role.actions)})_")
    for name in role.withheld:
        app_label, codename = name.split(".")
        wanted = wanted.exclude(content_type__app_label=app_label, codename=codename)
    extra = Q()
    for name in role.extra:
        app_label, codename = name.split(".")
        extra |= Q(content_type__app_label=app_label, codename=codename)
    extras = list(Permission.objects.filter(extra)) if role.extra else []
    if len(extras) != len(role.extra):
        found = {f"{p.content_type.app_label}.{p.codename}" for p in extras}
        raise ApplicationError(f"Role {role.name}: no permission {sorted(set(role.extra) - found)} (run migrate "
                               "first).", code=NOT_FOUND)
    return sorted({*wanted, *extras}, key=lambda p: (p.content_type.app_label, p.codename))


def roles_sync() -> dict[str, int]:
    """Create each role's group or set its permissions to exactly the role's (idempotent); the number of
    permissions per role."""
    counts = {}
    with transaction.atomic():
        for role in ROLES:
            group, _ = Group.objects.get_or_create(name=role.name)
            permissions = role_permissions(role)
            group.permissions.set(permissions)
            counts[role.name] = len(permissions)
    return counts
