"""Study settings are declared once (annotation.services.study_settings.STUDY_SETTINGS): every door — the
`StudySettings` that `study_create` takes, the API body `StudyCreateInput`, the admin's "Create a study" form and the
`create_study` options — carries every setting with the declared default and bounds, and offers every input a
study's items are made of (annotation.services.study_build.STUDY_INPUTS). A door that misses one, or a default that
drifts, fails here."""
from __future__ import annotations

import dataclasses
import inspect

import pytest
from rest_framework.fields import empty

from annotation.forms import StudyCreateForm
from annotation.management.commands.create_study import Command
from annotation.models import Study
from annotation.serializers import StudyCreateInput
from annotation.services.studies import study_create
from annotation.services.study_build import STUDY_INPUTS, study_build
from annotation.services.study_settings import (
    STUDY_SETTINGS,
    StudySettings,
    study_settings_build,
    study_settings_check,
)
from core.errors import ApplicationError

# Where a door names an input differently from the service keyword.
API_NAMES = {"corpus": "corpora", "component": "components", "status": "instance_status"}
FORM_NAMES = {**API_NAMES, "items": "items_file", "outputs": "outputs_file", "practice": "practice_file",
              "rewrite": "sources"}
CLI_DESTS = {"validation_rates": "validation_rate", "rates_from_studies": "rates_from_study", "practice": "practice",
             "eligibility_questions": "eligibility", "rewrite": "sources"}
# The admin proposes two fresh random codes where the service's empty default draws them: the same outcome.
FORM_SHOWS_RANDOM = {"completion_code", "screened_out_code"}


def cli_actions() -> dict[str, object]:
    parser = Command().create_parser("manage.py", "create_study")
    return {action.dest: action for action in parser._actions}


@pytest.mark.parametrize("setting", STUDY_SETTINGS, ids=lambda s: s.name)
def test_every_door_has_the_setting_with_its_default(setting) -> None:
    service = {field.name: field for field in dataclasses.fields(StudySettings)}
    assert setting.name in service, "StudySettings misses it"
    assert service[setting.name].default == setting.default, "StudySettings' default differs"
    assert setting.field in {f.name for f in Study._meta.get_fields()}, "no Study field stores it"

    api = StudyCreateInput().fields[setting.name]
    assert api.default is not empty and api.default == setting.default, "the API's default differs"
    for bound in ("min_value", "max_value"):
        assert getattr(api, bound, None) == getattr(setting, bound), f"the API's {bound} differs"

    form = StudyCreateForm().fields[setting.name]
    if setting.name in FORM_SHOWS_RANDOM:
        assert callable(form.initial)
    else:
        assert form.initial == setting.default, "the form's initial value differs"
    assert not form.required
    for bound in ("min_value", "max_value"):
        assert getattr(form, bound, None) == getattr(setting, bound), f"the form's {bound} differs"

    cli = cli_actions()
    assert setting.name in cli, "create_study has no option for it"
    assert cli[setting.name].default == setting.default, "create_study's default differs"
    assert setting.flag in cli[setting.name].option_strings


@pytest.mark.parametrize("given", STUDY_INPUTS, ids=lambda i: i.name)
def test_every_door_offers_every_input(given) -> None:
    assert given.name in inspect.signature(study_build).parameters
    assert API_NAMES.get(given.name, given.name) in StudyCreateInput().fields
    assert FORM_NAMES.get(given.name, given.name) in StudyCreateForm().fields
    assert CLI_DESTS.get(given.name, given.name) in cli_actions()


def test_the_service_checks_each_declared_bound_in_the_words_of_the_form_and_api() -> None:
    for setting in STUDY_SETTINGS:
        if setting.min_value is None:
            continue
        below = setting.type(setting.min_value - 1)
        with pytest.raises(ApplicationError) as refused:
            study_settings_check({setting.name: below})
        assert refused.value.field == setting.name
        assert refused.value.message == setting.bound_message("min") % {"show_value": below}
        form = StudyCreateForm({"slug": "x", setting.name: below})
        assert not form.is_valid() and form.errors[setting.name] == [refused.value.message]
        api = StudyCreateInput(data={"slug": "x", setting.name: below})
        assert not api.is_valid() and [str(e) for e in api.errors[setting.name]] == [refused.value.message]


def test_the_cross_field_rule_lives_in_the_service_only() -> None:
    """m ≤ k is checked once, by study_settings_build; the form and the serializer pass it through (and show its
    error)."""
    assert StudyCreateForm({"slug": "x", "instance_status": "candidate", "annotators_per_item": 3,
                            "min_correct": 4}).is_valid()
    assert StudyCreateInput(data={"slug": "x", "annotators_per_item": 3, "min_correct": 4}).is_valid()
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(annotators_per_item=3, min_correct=4)
    assert refused.value.field == "min_correct" and "between 1 and annotators per item (3)" in refused.value.message
    assert study_settings_build(item_kind="likert", annotators_per_item=3, min_correct=4).min_correct == 3
    defaults = study_settings_build()
    assert (defaults.annotators_per_item, defaults.min_correct, defaults.allow_anonymous) == (5, 3, True)


def test_the_settings_object_is_frozen_and_refuses_an_unknown_setting() -> None:
    settings = study_settings_build(retention_days=30, release_annotator_labels=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.min_correct = 1
    assert settings.columns()["retention_days"] == 30 and settings.columns()["release_annotator_labels"] is False
    assert settings.columns()["max_batches_per_participant"] == 5
    with pytest.raises(ApplicationError) as refused:
        study_settings_build(annotators=3)
    assert refused.value.field == "annotators"


def test_study_create_is_documented() -> None:
    doc = inspect.getdoc(study_create) or ""
    assert "STUDY_SETTINGS" in doc and "m" in doc and len(doc.splitlines()) > 5
