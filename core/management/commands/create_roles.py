"""python manage.py create_roles: the researcher, reviewer, viewer and data steward groups with their model permissions
(core/roles.py); run again after an upgrade to give them the permissions of new models. Add people to a group in
the admin (Users › a user › Groups)."""
from __future__ import annotations

from typing import Any

from core.commands import JsonCommand
from core.roles import ROLES, roles_sync


class Command(JsonCommand):
    help = "Create or update the researcher, reviewer and viewer groups (model permissions per role)."

    def run(self, **options: Any) -> dict[str, Any]:
        counts = roles_sync()
        return {"roles": {role.name: {"permissions": counts[role.name], "for": role.description} for role in ROLES}}
