"""One permission rule for every researcher door: the model permissions the admin uses.

An API view names the model it works on (`permission_model`) and, where a method does something other than
the REST default (GET views, POST adds), the action per method (`permission_actions`). The user must be active
staff (as the admin requires) and hold `<app>.<action>_<model>`; superusers hold every permission. A view that
names no model is refused (closed by default): a new endpoint cannot become public by forgetting a line.

Admin custom views call `admin_permission_required` with the same codename; writing admin actions declare
`permissions=[...]` so that Django hides them from users without the permission and refuses them when posted.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

DEFAULT_ACTIONS = {"GET": "view", "HEAD": "view", "OPTIONS": "view", "POST": "add", "PUT": "change",
                   "PATCH": "change", "DELETE": "delete"}


def permission_codename(model: type[Model], action: str) -> str:
    opts = model._meta
    return f"{opts.app_label}.{action}_{opts.model_name}"


def user_may(user: AbstractBaseUser | Any, model: type[Model], action: str) -> bool:
    """Active staff with the model permission (a superuser has all)."""
    if not (user and user.is_authenticated and user.is_active and user.is_staff):
        return False
    return user.has_perm(permission_codename(model, action))


def admin_permission_required(request: HttpRequest, model: type[Model], action: str) -> None:
    """For admin custom views (which `admin_view` only checks for staff): 403 without the model permission."""
    if not user_may(request.user, model, action):
        raise PermissionDenied(f"You need the permission to {action} {model._meta.verbose_name_plural}.")


class ModelPermission(BasePermission):
    """The researcher API's default permission class (settings.REST_FRAMEWORK)."""

    message = "You do not have the permission this request needs."

    def has_permission(self, request: Request, view: Any) -> bool:
        model = getattr(view, "permission_model", None)
        if model is None:
            return False
        actions = {**DEFAULT_ACTIONS, **getattr(view, "permission_actions", {})}
        action = actions.get(request.method)
        return action is not None and user_may(request.user, model, action)
