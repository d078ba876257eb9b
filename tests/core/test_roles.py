"""The roles a team starts from: `create_roles` makes the researcher, reviewer, viewer and data steward groups of
core/roles.py (the role matrix tries every door as each of them), and the README documents them with the names the
admin's permission picker shows."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command

from core.roles import PROJECT_APPS, ROLES

pytestmark = pytest.mark.django_db
README = Path(__file__).resolve().parents[2] / "README.md"


def create_roles() -> dict:
    out = io.StringIO()
    call_command("create_roles", stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def codenames(group: str) -> set[str]:
    return {f"{app}.{code}" for app, code in Group.objects.get(name=group).permissions.values_list(
        "content_type__app_label", "codename")}


def test_create_roles_makes_the_four_groups_idempotently() -> None:
    summary = create_roles()
    assert set(summary["roles"]) == {"researcher", "reviewer", "viewer", "data steward"}
    researcher, reviewer, viewer = codenames("researcher"), codenames("reviewer"), codenames("viewer")
    steward = codenames("data steward")
    assert "tasks.add_corpus" in researcher and "annotation.change_study" in researcher
    assert "platforms.spend_platformstudy" not in researcher  # spending is given on its own
    assert not any(".delete_" in p for p in researcher | reviewer | viewer)
    assert all(p.split(".")[1].startswith("view_") for p in viewer)
    every_view = {f"{p.content_type.app_label}.{p.codename}" for p in Permission.objects.filter(
        content_type__app_label__in=PROJECT_APPS, codename__startswith="view_")}
    # Personal data and its access log are the data steward's alone, and nobody writes the log by hand.
    personal = {"core.view_personal_data", "core.view_personaldataaccess"}
    assert viewer == every_view - personal and steward == every_view
    assert not (researcher | reviewer | viewer) & {*personal, "core.change_personaldataaccess",
                                                   "core.add_personaldataaccess"}
    assert reviewer - viewer == {"annotation.change_rewritereview", "annotation.add_writingsignal",
                                 "scoring.change_contenterror", "tasks.change_numbersubstitutioncandidate"}
    # Run again (an upgrade): the same groups, a permission removed by hand is given back, nothing duplicated.
    Group.objects.get(name="viewer").permissions.remove(Permission.objects.get(codename="view_study"))
    assert create_roles() == summary and Group.objects.count() == 4
    assert "annotation.view_study" in codenames("viewer")


def test_the_readme_names_what_the_permission_picker_shows() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "create_roles" in text
    for role in ROLES:
        assert f"| `{role.name}` |" in text
    for label in PROJECT_APPS:
        assert f"{apps.get_app_config(label).verbose_name} |" in text  # the picker's "app title | model | …"
    spend = Permission.objects.get(codename="spend_platformstudy")
    assert str(spend) in text  # e.g. "Crowd platforms | platform study | Can send decisions, …"
    for role in ROLES:
        for name in role.extra:
            app_label, codename = name.split(".")
            picker = str(Permission.objects.get(content_type__app_label=app_label, codename=codename))
            assert picker.replace("|", "\\|") in text, picker
