"""A study's settings, declared once: name, type, default, bounds, label, help, the Study field that stores it and
the admin fieldset it is shown in.

Everything else is derived from this table. The service's settings object `StudySettings` (a frozen dataclass, one
field per row) is built by `study_settings_build` alone, which applies the defaults, checks every bound and choice,
and the rules across settings (1 ≤ m ≤ k, an http(s) redirect URL, a platform's entry rules) once; `study_create`
takes it and stores `StudySettings.columns()`. The API's `StudyCreateInput` and the admin's "Create a study" form
build their fields from the rows (`drf_fields`, `form_fields`: the same bounds, with the service's own error
message), `create_study` adds one option per setting (`cli_arguments_add`, `--<name>` unless `cli` names the flag)
and prints them in its summary (`study_settings_summary`), and the study's admin page shows each in its `section`
(`admin_section_fields`). `tests/annotation/services/test_study_settings.py` checks every door against the table.

The doors map a service `ApplicationError.field` back onto their own field.

Adding a setting: the `Study` field (and its migration) and one `StudySetting` row here (`column` where the field's
name differs). The settings object, the API body, both admin forms and the command follow from the row.
"""
from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from rest_framework import serializers

from annotation.models import HTTP_URL, ORDERING_KINDS, EntryPlatform, UncertaintyModel
from annotation.services.participation import PROLIFIC_ID
from annotation.services.study_language import study_language_check
from core.errors import ApplicationError
from tasks.stel.majority import min_correct_default

ALL = "all"
ORDERING = "ordering"  # quadruple, triple, style-or-content: drawn from task instances

# The study admin page's fieldsets a setting is shown in (annotation.admin.studies.StudyAdmin.fieldsets).
STUDY, ASSIGNMENT, TEXTS, PLATFORM, ENTRY, PERSONAL_DATA = (
    "study", "Assignment", "Participant texts", "Platform", "Who may take part", "Personal data")


@dataclass(frozen=True)
class StudySetting:
    name: str
    type: type  # int, float, bool or str
    default: Any
    label: str
    help: str = ""
    min_value: float | None = None
    max_value: float | None = None
    nullable: bool = False  # None is a value of its own ("the default of the platform", "no cap")
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    kinds: str = ALL
    cli: str = ""  # the command-line flag where it is not --<name with dashes>
    url: bool = False
    multiline: bool = False
    column: str = ""  # the Study field that stores it, where it is not `name`
    section: str = ""  # the admin change page's fieldset it is shown in

    @property
    def field(self) -> str:
        return self.column or self.name

    @property
    def flag(self) -> str:
        return self.cli or "--" + self.name.replace("_", "-")

    def bound_message(self, which: str) -> str:
        """The one wording of a bound, with `%(show_value)s` for the value given (Django's validator params)."""
        if which == "min":
            return f"{self.label} must be at least {_num(self.min_value)}, not %(show_value)s."
        return f"{self.label} must be at most {_num(self.max_value)}, not %(show_value)s."


def _num(value: float | None) -> str:
    return str(int(value)) if value is not None and float(value).is_integer() else str(value)


STUDY_SETTINGS: tuple[StudySetting, ...] = (
    StudySetting("title", str, "", "Title", "Shown to participants; empty: the slug.", max_length=200, section=STUDY),
    StudySetting("language", str, "", "Language",
                 "BCP 47 tag of the participant pages and item texts (fr, pt-BR, ar); empty: the corpus's, else en.",
                 max_length=35, section=STUDY),
    StudySetting("annotators_per_item", int, None, "Annotators per item (k)",
                 "k distinct people per item; empty: the rating preset's, else 5.", min_value=1, max_value=50,
                 nullable=True, section=ASSIGNMENT),
    StudySetting("min_correct", int, None, "Min correct (m)",
                 "m of k correct validates an instance; empty: a strict majority.", min_value=1, nullable=True,
                 kinds=ORDERING, section=ASSIGNMENT),
    StudySetting("items_per_batch", int, 14, "Items per batch", min_value=1, section=ASSIGNMENT),
    StudySetting("screening_per_batch", int, 2, "Screening questions per batch",
                 "Screening questions mixed into each batch (ordering studies).", min_value=0, kinds=ORDERING,
                 section=ASSIGNMENT),
    StudySetting("max_batches", int, 5, "Max batches per participant", min_value=1,
                 column="max_batches_per_participant", section=ASSIGNMENT),
    StudySetting("time_limit_minutes", int, 30, "Time limit (minutes)", "A batch's time limit.", min_value=1,
                 cli="--time-limit", column="batch_time_limit_minutes", section=ASSIGNMENT),
    StudySetting("adaptive", bool, False, "Adaptive collection",
                 "Stop serving items whose decision cannot change.", kinds=ORDERING, column="adaptive_stopping",
                 section=ASSIGNMENT),
    StudySetting("posterior_stop", float, None, "Posterior stop",
                 "Adaptive studies: validate an item and stop asking once the pooled one-coin posterior P(gold right "
                 "| its answers) reaches this (e.g. 0.99); dropped once it cannot within k. Empty: off (m of k).",
                 min_value=0.5, max_value=0.9999, nullable=True, kinds=ORDERING, section=ASSIGNMENT),
    StudySetting("posterior_drop", float, None, "Posterior drop",
                 "With a posterior stop: also drop an item early once its posterior is at most this. Empty: only "
                 "when the stop is out of reach.", min_value=0.0, max_value=0.5, nullable=True, kinds=ORDERING,
                 section=ASSIGNMENT),
    StudySetting("posterior_pilot_items", int, 100, "Posterior pilot (items)",
                 "Items decided by m of k before the posterior rule's parameters are first fitted.", min_value=10,
                 max_value=100000, kinds=ORDERING, section=ASSIGNMENT),
    StudySetting("uncertainty_model", str, "auto", "Uncertainty model",
                 "p_correct's model: auto (item difficulty classes where the overdispersion test finds them), "
                 "one_coin, or item_difficulty (data known to hold very hard items).",
                 choices=tuple(UncertaintyModel.values), kinds=ORDERING, section=ASSIGNMENT),
    StudySetting("allow_multiple_setups", bool, False, "Allow multiple setups",
                 "A participant may also take this study's batches after one of another setup.", kinds=ORDERING,
                 section=ASSIGNMENT),
    StudySetting("completion_code", str, "", "Completion code",
                 "The code finished participants get (Prolific's completion code); empty: a random one.",
                 max_length=64, section=PLATFORM),
    StudySetting("screened_out_code", str, "", "Screened-out code",
                 "The code people screened out get; empty: a random one, independent of the completion code.",
                 max_length=64, section=PLATFORM),
    StudySetting("redirect_url", str, "", "Redirect URL",
                 "Where finished participants go, e.g. https://app.prolific.com/submissions/complete?cc={code}.",
                 url=True, section=PLATFORM),
    StudySetting("estimated_minutes", int, 10, "Estimated minutes", "Minutes a batch is expected to take.",
                 min_value=1, section=PLATFORM),
    StudySetting("target_hourly_pay", float, 9.0, "Target hourly pay",
                 "Per hour, in the platform's currency.", min_value=0, cli="--hourly-pay", section=PLATFORM),
    StudySetting("consent_text", str, None, "Consent text", "Empty: the default consent text.", nullable=True,
                 multiline=True, section=TEXTS),
    StudySetting("special_category_consent", str, "", "Special-category consent",
                 "The explicit-consent statement participants tick separately; required when the study asks "
                 "special-category questions (ethnicity, political orientation, a question marked special_category).",
                 multiline=True, section=TEXTS),
    StudySetting("task_description", str, None, "Task description",
                 "Empty: composed from the study's components and setup (or the kind's default).", nullable=True,
                 multiline=True, section=TEXTS),
    StudySetting("platform", str, "any", "Platform", "Accept only this platform's links and check their parameters.",
                 choices=("any", "prolific", "mturk"), section=ENTRY),
    StudySetting("prolific_study_id", str, "", "Prolific study id",
                 "The STUDY_ID that Prolific links must carry (24 hexadecimal characters).", max_length=64,
                 section=ENTRY),
    StudySetting("allow_anonymous", bool, None, "Allow anonymous links",
                 "Empty: allowed only when the platform is 'any'.", nullable=True, section=ENTRY),
    StudySetting("first_answer_grace_seconds", int, None, "First-answer grace (seconds)",
                 "A started batch without a first answer gives its items back after this; empty: the default.",
                 min_value=1, nullable=True, cli="--first-answer-grace", section=ENTRY),
    StudySetting("max_open_batches", int, None, "Max open batches", "Batches open at once; empty: no cap.",
                 min_value=1, nullable=True, section=ENTRY),
    StudySetting("min_seconds_per_item", float, None, "Min seconds per item",
                 "Flag participants faster than this (server-measured median).", min_value=0, max_value=3600,
                 nullable=True, section=ENTRY),
    StudySetting("retention_days", int, None, "Retention (days)",
                 "Days after the study is closed and its payments are settled before raw platform ids become "
                 "pseudonyms and persona answers and telemetry detail are deleted; empty: STYLECROWD_RETENTION_DAYS.",
                 min_value=0, nullable=True, section=PERSONAL_DATA),
    StudySetting("release_annotator_labels", bool, True, "Release annotator labels",
                 "Publish each valid vote with its annotator's pseudonym (the per-annotator votes table); the consent "
                 "says so.", section=PERSONAL_DATA),
)
SETTINGS_BY_NAME = {setting.name: setting for setting in STUDY_SETTINGS}


def setting_applies(kinds: str, kind: str) -> bool:
    """Whether a setting or input declared for `kinds` ("all", "ordering", or kinds separated by spaces) applies to
    a study of item kind `kind` (the admin's form per kind shows only these)."""
    names = kinds.split()
    return ALL in names or kind in names or (ORDERING in names and kind in ORDERING_KINDS)


def study_settings_defaults() -> dict[str, Any]:
    return {setting.name: setting.default for setting in STUDY_SETTINGS}


def study_settings_check(values: dict[str, Any]) -> None:
    """Each declared bound and choice, with the wording every door shows (the field named in `details.field`)."""
    for name, value in values.items():
        setting = SETTINGS_BY_NAME.get(name)
        if setting is not None:
            study_setting_check(setting, value, field=name)


def study_setting_check(setting: StudySetting, value: Any, *, field: str) -> None:
    """One setting's bounds and choices (None passes: the default), the error naming `field`."""
    if value is None:
        return
    if setting.choices and value not in setting.choices:
        raise ApplicationError(f"{setting.label} must be one of {', '.join(setting.choices)}, not {value!r}.",
                               field=field)
    if setting.min_value is not None and value < setting.min_value:
        raise ApplicationError(setting.bound_message("min") % {"show_value": value}, field=field)
    if setting.max_value is not None and value > setting.max_value:
        raise ApplicationError(setting.bound_message("max") % {"show_value": value}, field=field)
    if setting.max_length is not None and len(value) > setting.max_length:
        raise ApplicationError(f"{setting.label} may have at most {setting.max_length} characters.", field=field)


# --- the settings object -----------------------------------------------------------------------------------------


def _settings_class() -> type:
    """A frozen dataclass with one keyword-only field per declared setting, its default the declared one."""
    fields = [(s.name, Any, dataclasses.field(default=s.default)) for s in STUDY_SETTINGS]

    def columns(self: Any) -> dict[str, Any]:
        """The Study fields that store the settings, as `Study.objects.create` takes them."""
        return {s.field: getattr(self, s.name) for s in STUDY_SETTINGS}

    return dataclasses.make_dataclass("StudySettings", fields, frozen=True, kw_only=True,
                                      namespace={"columns": columns, "__module__": __name__})


StudySettings = _settings_class()
StudySettings.__doc__ = """A study's settings, checked: the declared defaults applied, every bound and choice held,
k and m resolved (m ≤ k), the platform's entry rules applied. Built by `study_settings_build` only."""


def study_settings_build(*, item_kind: str = "", **values: Any) -> Any:
    """The one place a study's settings are checked: unknown names, the declared bounds and choices (each error
    naming its setting in `field`), an http(s) redirect URL, k (default 5) and m (default a strict majority) with
    1 ≤ m ≤ k, and a platform's entry rules (`participation_settings_check`). A kind without correct answers
    (`item_kind` likert, ranking, rewrite) takes m down to k: the m-of-k rule does not apply to it."""
    unknown = sorted(set(values) - SETTINGS_BY_NAME.keys())
    if unknown:
        raise ApplicationError(f"Unknown study setting: {', '.join(unknown)}.", field=unknown[0])
    given = {**study_settings_defaults(), **values}
    study_settings_check(given)
    given["language"] = study_language_check(given["language"] or "")
    redirect_url_check(redirect_url=given["redirect_url"])
    k = 5 if given["annotators_per_item"] is None else given["annotators_per_item"]
    m = min_correct_default(k) if given["min_correct"] is None else given["min_correct"]  # 3 of 5, as STEL
    if item_kind and item_kind not in ORDERING_KINDS:
        m = min(m, k)
    if not 1 <= m <= k:
        raise ApplicationError(f"Min correct must be between 1 and annotators per item ({k}), not {m}.",
                               field="min_correct")
    posterior_settings_check(adaptive=given["adaptive"], stop=given["posterior_stop"], drop=given["posterior_drop"])
    entry = participation_settings_check(**{name: given[name] for name in ENTRY_CHECKED})
    return StudySettings(**{**given, "annotators_per_item": k, "min_correct": m, **entry})


def posterior_settings_check(*, adaptive: bool, stop: float | None, drop: float | None) -> None:
    """The posterior rule (tasks/stel/posterior.py) stops items early, so it needs adaptive collection; a drop
    threshold needs a stop threshold above it."""
    if stop is not None and not adaptive:
        raise ApplicationError("Posterior stop needs adaptive collection (--adaptive): it decides when to stop "
                               "asking.", field="posterior_stop")
    if drop is not None and (stop is None or drop >= stop):
        raise ApplicationError("Posterior drop needs a posterior stop above it.", field="posterior_drop")


def redirect_url_check(*, redirect_url: str) -> None:
    """A redirect URL must be http(s): the participant's browser follows it (javascript: would run in our origin)."""
    if not redirect_url:
        return
    try:
        HTTP_URL(redirect_url.replace("{code}", "CODE"))
    except ValidationError:
        raise ApplicationError(
            "Redirect URL must be an http:// or https:// URL (e.g. "
            "https://app.prolific.com/submissions/complete?cc={code}).",
            details={"redirect_url": ["must be an http(s) URL"]}, field="redirect_url",
        ) from None


ENTRY_CHECKED = ("platform", "prolific_study_id", "allow_anonymous")


def participation_settings_check(*, platform: str, prolific_study_id: str, allow_anonymous: bool | None
                                 ) -> dict[str, Any]:
    """Who may take part (annotation/services/participation.py), checked: the values to store."""
    if platform not in EntryPlatform.values:
        raise ApplicationError(f"Platform must be one of {EntryPlatform.values}, not {platform!r}.", field="platform")
    if prolific_study_id and (platform != EntryPlatform.PROLIFIC or not PROLIFIC_ID.match(prolific_study_id)):
        raise ApplicationError("Prolific study id: needs platform prolific and a Prolific study id "
                               "(24 hexadecimal characters).", field="prolific_study_id")
    if allow_anonymous is None:
        allow_anonymous = platform == EntryPlatform.ANY
    if allow_anonymous and platform != EntryPlatform.ANY:
        raise ApplicationError(f"Allow anonymous cannot be used with platform {platform}: a platform study "
                               "takes participants from the platform's links only.", field="allow_anonymous")
    return {"platform": platform, "prolific_study_id": prolific_study_id.lower(), "allow_anonymous": allow_anonymous}


def study_settings_summary(study: Any) -> dict[str, Any]:
    """A study's settings as a command's summary prints them (the long texts left out), by their setting names."""
    return {s.name: getattr(study, s.field) for s in STUDY_SETTINGS if not s.multiline}


def admin_section_fields(section: str) -> list[str]:
    """The Study fields of the settings shown in one fieldset of the study's admin page, in declared order."""
    return [s.field for s in STUDY_SETTINGS if s.section == section]


# --- the doors, derived ------------------------------------------------------------------------------------------


def _bounds(setting: StudySetting) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    messages: dict[str, str] = {}
    for which in ("min", "max"):
        bound = getattr(setting, f"{which}_value")
        if bound is not None:
            kwargs[f"{which}_value"] = bound
            messages[f"{which}_value"] = setting.bound_message(which)
    return {**kwargs, "error_messages": messages} if kwargs else {}


def drf_fields() -> dict[str, Any]:
    """The API body's fields (annotation.serializers.StudyCreateInput)."""
    return {s.name: drf_field(s) for s in STUDY_SETTINGS}


def drf_field(s: StudySetting, **overrides: Any) -> Any:
    """One setting's API field, with its declared default and bounds (so the OpenAPI schema states them too)."""

    common: dict[str, Any] = {"required": False, "default": s.default, "help_text": s.help or None,
                              "label": s.label, **overrides}
    if s.nullable:
        common["allow_null"] = True
    if s.choices:
        return serializers.ChoiceField(choices=list(s.choices), **common)
    if s.type is bool:
        return serializers.BooleanField(**common)
    if s.type is int:
        return serializers.IntegerField(**common, **_bounds(s))
    if s.type is float:
        return serializers.FloatField(**common, **_bounds(s))
    if s.url:
        return serializers.URLField(allow_blank=True, **common)
    return serializers.CharField(allow_blank=True, max_length=s.max_length, **common)


def form_fields() -> dict[str, Any]:
    """The admin form's fields (annotation.forms.StudyCreateForm); an empty box is the default."""

    fields: dict[str, Any] = {}
    for s in STUDY_SETTINGS:
        common: dict[str, Any] = {"required": False, "label": s.label, "help_text": s.help,
                                  "initial": s.default}
        if s.choices:
            field = forms.ChoiceField(choices=[(c, c) for c in s.choices], **common)
        elif s.type is bool and s.nullable:
            field = forms.NullBooleanField(**common)
        elif s.type is bool:
            field = forms.BooleanField(**common)
        elif s.type is int:
            field = forms.IntegerField(**common, **_bounds(s))
        elif s.type is float:
            field = forms.FloatField(**common, **_bounds(s))
        elif s.url:
            field = forms.URLField(**common)
        elif s.multiline:
            field = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), **common)
        else:
            field = forms.CharField(max_length=s.max_length, **common)
        fields[s.name] = field
    return fields


def form_values(cleaned: dict[str, Any], fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """The service's keywords from a form's cleaned data: an empty box is the declared default."""
    values = {}
    for s in STUDY_SETTINGS:
        value = cleaned.get(s.name)
        if value is None or (value == "" and s.type is str):
            value = s.default
        values[s.name] = value
    return values


def cli_arguments_add(parser: Any) -> None:
    """One option per setting (create_study); its dest is the service keyword, so errors name the flag."""
    for s in STUDY_SETTINGS:
        kwargs: dict[str, Any] = {"dest": s.name, "default": s.default, "help": s.help or s.label}
        if s.type is bool and (s.nullable or s.default):  # a default of True needs its --no- flag
            kwargs["action"] = argparse.BooleanOptionalAction
        elif s.type is bool:
            kwargs["action"] = "store_true"
        else:
            kwargs["type"] = s.type
            if s.choices:
                kwargs["choices"] = list(s.choices)
        parser.add_argument(s.flag, **kwargs)
