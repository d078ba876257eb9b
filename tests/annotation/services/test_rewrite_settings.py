"""A reviewed rewrite study's settings are declared once (annotation.services.rewrite_settings.REWRITE_SETTINGS):
the service, the API body, the admin form, the `create_study` options and the stored RewriteSettings carry each with
the declared default and bounds."""
from __future__ import annotations

import inspect

import pytest

from annotation.forms import StudyCreateForm
from annotation.services.rewrite_settings import REWRITE_SETTINGS
from annotation.services.study_build import study_build
from core.errors import ApplicationError
from tests.annotation.services.test_study_settings import cli_actions

# A rewrite setting's name at each door, where it differs from rewrite_study_create's keyword.
REWRITE_API = {"min_words": "filters.min_words", "max_words": "filters.max_words",
               "min_accepted": "qualify_min_accepted", "min_rate": "qualify_min_rate"}
REWRITE_FORM = {"min_length": "rewrite_min_length", "max_length": "rewrite_max_length",
                "min_accepted": "qualify_min_accepted", "min_rate": "qualify_min_rate"}
REWRITE_MODEL = {"max_length": "max_length", "copy_threshold": "copy_threshold",
                 "min_accepted": "qualification_min_accepted", "min_rate": "qualification_min_rate"}


@pytest.mark.parametrize("setting", REWRITE_SETTINGS, ids=lambda s: s.name)
def test_a_rewrite_setting_has_one_default_at_every_door(setting) -> None:
    from annotation.models import RewriteSettings
    from annotation.serializers import RewriteCreateInput
    from annotation.services.rewrites import DEFAULT_FILTERS, rewrite_study_create

    service = inspect.signature(rewrite_study_create).parameters
    default = service[setting.name].default if setting.name in service else DEFAULT_FILTERS[setting.name]
    assert default == setting.default, "the service's default differs"
    api_fields = RewriteCreateInput().fields
    api_name = REWRITE_API.get(setting.name, setting.name)
    if "." in api_name:
        outer, inner = api_name.split(".")
        api = api_fields[outer].fields[inner]
    else:
        api = api_fields[api_name]
    assert api.default == setting.default, "the API's default differs"
    assert (getattr(api, "min_value", None), getattr(api, "max_value", None)) == (
        setting.min_value, setting.max_value), "the API's bounds differ (the schema states them)"
    form = StudyCreateForm().fields[REWRITE_FORM.get(setting.name, setting.name)]
    assert form.initial == setting.default, "the form's initial value differs"
    cli = next(a for a in cli_actions().values() if setting.flag in a.option_strings)
    assert cli.default == setting.default, "create_study's default differs"
    if setting.name in REWRITE_MODEL:
        assert RewriteSettings._meta.get_field(REWRITE_MODEL[setting.name]).default == setting.default


@pytest.mark.django_db
@pytest.mark.parametrize("value", [-3, 0, 40000])
def test_a_free_text_answers_least_characters_is_bounded_at_the_service_and_the_api(value: int) -> None:
    """`rewrite_min_length` (Likert/ranking/unreviewed rewrite items) has the rewrite setting's bounds (1-5000): the
    service refuses it naming the field (it reached the column before, a 500 for -3 and 40000), and the API body
    states the same bounds in the same words, so the schema tells them."""
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    from annotation.models import Study

    setting = next(s for s in REWRITE_SETTINGS if s.name == "min_length")
    which = "min" if value < setting.min_value else "max"
    message = setting.bound_message(which) % {"show_value": value}
    items = [{"id": "a", "source": "gonna be late", "rewrite": "I will be late."}]
    with pytest.raises(ApplicationError) as refused:
        study_build(slug="short", kind="likert", preset="gyafc", items=items, rewrite_min_length=value)
    assert (refused.value.field, refused.value.message) == ("rewrite_min_length", message)
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("boss", password="pw"))
    response = api.post("/api/v1/studies/", {"slug": "short", "kind": "likert", "preset": "gyafc", "items": items,
                                             "rewrite_min_length": value}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["details"]["rewrite_min_length"] == [message]
    assert not Study.objects.filter(slug="short").exists()
