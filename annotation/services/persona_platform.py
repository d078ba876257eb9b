"""Data minimisation: persona attributes read from the platform instead of asked.

Prolific already knows some of PASTEL's persona attributes (its "About you" answers). A rewrite study may name them
(`persona_from_platform`); their persona questions stay in `Study.eligibility_questions`, flagged
`"from_platform": "prolific"`, so the consent statement, the special-category rule and erasure/retention see them as
the persona data they are, while the participant page does not ask them (`questions_asked`). During a platform sync
the submission's demographics snapshot is read once; only the study's named attributes are kept, mapped to the
questions' choices (`persona_from_demographics`: ethnicity as Prolific's own values, or PASTEL's where the study asks
PASTEL's list), and the rest of the answer is dropped at once.

`PROLIFIC_DEMOGRAPHICS` is the one table from PASTEL's attribute names to Prolific's demographic keys. Prolific's
demographics object is free-form ("the dataset is dynamic"); the keys are the column names of Prolific's
demographic export ("Age", "Sex", "Ethnicity simplified", "Country of residence"); the names Prolific's API
reference gives the same columns ("Ethnicity (simplified)", "Current country of residence") are read too
(`KEY_SPELLINGS`). "Highest education level
completed" is the name of Prolific's education screener, assumed to be the key its snapshot uses. A value the table
does not know, "DATA_EXPIRED" (not answered) or "CONSENT_REVOKED" leaves the attribute unset rather than guessed.
Political orientation is not offered: Prolific's political screeners are country-specific scales that do not map
onto PASTEL's choices.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.error_codes import PERSONA_FROM_PLATFORM_UNAVAILABLE
from annotation.models import EntryPlatform, Participant, Study
from core.errors import ApplicationError
from core.languages import country_names

FROM_PLATFORM = "from_platform"
FIELD = "persona_from_platform"
NOT_ANSWERED = frozenset({"DATA_EXPIRED", "CONSENT_REVOKED", ""})


def _age(value: str) -> str | None:
    try:
        age = int(float(value))
    except ValueError:
        return None
    for low, high, label in ((18, 24, "18-24"), (25, 34, "25-34"), (35, 44, "35-44"), (45, 54, "45-54"),
                             (55, 74, "55-74")):
        if low <= age <= high:
            return label
    return "75+" if age >= 75 else None  # under 18 cannot be on Prolific: not a PASTEL bucket either


def _table(mapping: dict[str, str]) -> Callable[[str], str | None]:
    lowered = {key.lower(): value for key, value in mapping.items()}
    return lambda value: lowered.get(value.strip().lower())


# Prolific's names where CLDR's English name differs (its export writes "United States", "United Kingdom" as CLDR does).
COUNTRY_ALIASES = {"usa": "United States", "united states of america": "United States", "uk": "United Kingdom",
                   "vietnam": "Vietnam", "viet nam": "Vietnam", "czech republic": "Czechia", "türkiye": "Turkey"}


def _country(value: str) -> str | None:
    """The persona question's choice (CLDR's English name of the country); a name it does not know stays unset."""
    names = {name.lower(): name for name in country_names("en")}
    key = value.strip().lower()
    name = names.get(key) or COUNTRY_ALIASES.get(key)
    return name if name in names.values() else None


# PASTEL attribute -> (Prolific's demographic key, the mapping of its value onto PASTEL's choices).
PROLIFIC_DEMOGRAPHICS: dict[str, tuple[str, Callable[[str], str | None]]] = {
    "age": ("Age", _age),
    "gender": ("Sex", _table({"Female": "female", "Male": "male", "Prefer not to say": "prefer not to say"})),
    "country": ("Country of residence", _country),
    # Prolific's own values, as its `ethnicity=prolific` question stores them (PASTEL's list: `CHOICE_ALIASES`).
    "ethnicity": ("Ethnicity simplified", _table({
        "White": "White", "Mixed": "Mixed", "Asian": "Asian", "Black": "Black", "Other": "Other",
        "Prefer not to say": "prefer not to say"})),
    "education": ("Highest education level completed", _table({
        "No formal qualifications": "no degree",
        "Secondary education (e.g. GED/GCSE)": "high school",
        "High school diploma/A-levels": "high school",
        "Technical/community college": "associate degree",
        "Undergraduate degree (BA/BSc/other)": "bachelor's degree",
        "Graduate degree (MA/MSc/MPhil/other)": "master's degree",
        "Doctorate degree (PhD/other)": "doctorate",
        "Prefer not to say": "prefer not to say"})),
}
# A mapped value's choice in a question with another list: Prolific's ethnicity in PASTEL's US-census list (an
# English study naming `ethnicity=pastel`, and the studies made before Prolific's own list was offered).
CHOICE_ALIASES: dict[str, dict[str, str]] = {
    "ethnicity": {"Black": "Black or African American", "Mixed": "mixed", "Other": "other"},
}
# The other names of a demographic key: those of Prolific's API reference (its demographic-export endpoints).
KEY_SPELLINGS: dict[str, tuple[str, ...]] = {
    "Ethnicity simplified": ("Ethnicity (simplified)",), "Country of residence": ("Current country of residence",),
}
PLATFORM_TABLES = {EntryPlatform.PROLIFIC: PROLIFIC_DEMOGRAPHICS}
PLATFORM_NAMES = {EntryPlatform.PROLIFIC: "Prolific"}


def persona_from_platform_parse(value: str | list[str] | None) -> list[str]:
    """The attribute names, from a comma-separated string (every door's spelling) or a list."""
    names = value.split(",") if isinstance(value, str) else list(value or [])
    return list(dict.fromkeys(str(name).strip() for name in names if str(name).strip()))


def persona_from_platform_check(*, attributes: list[str], platform: str) -> None:
    """Only a Prolific study can read persona attributes from the platform, and only the attributes the table maps:
    the same refusal at every door (create_study, the admin form, the API body), before anything is stored."""
    if not attributes:
        return
    table = PLATFORM_TABLES.get(platform)
    if table is None:
        raise ApplicationError(
            f"Persona from platform: only a Prolific study (platform prolific) can read persona attributes from the "
            f"platform; this study's platform is {platform!r}, so ask them instead (persona).",
            code=PERSONA_FROM_PLATFORM_UNAVAILABLE, field=FIELD, details={FIELD: ["needs platform prolific"]})
    unknown = [name for name in attributes if name not in table]
    if unknown:
        raise ApplicationError(
            f"Persona from platform: {', '.join(unknown)} cannot be read from {PLATFORM_NAMES[platform]}; "
            f"it can give {', '.join(sorted(table))}.", code=PERSONA_FROM_PLATFORM_UNAVAILABLE, field=FIELD,
            details={FIELD: [f"unknown: {', '.join(unknown)}"]})


def persona_questions_mark(*, questions: list[dict[str, Any]], attributes: list[str],
                           platform: str) -> list[dict[str, Any]]:
    """The persona questions with those named read from the platform flagged (not asked)."""
    return [{**q, FROM_PLATFORM: platform} if q.get("persona") and q.get("name") in attributes else q
            for q in questions]


def questions_asked(questions: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The eligibility and persona questions a participant is asked: those read from the platform left out."""
    return [q for q in questions or [] if not q.get(FROM_PLATFORM)]


def questions_from_platform(questions: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [q for q in questions or [] if q.get(FROM_PLATFORM)]


def platform_persona_attributes(*, study: Study) -> list[str]:
    return [str(q["name"]) for q in questions_from_platform(study.eligibility_questions)]


def persona_from_demographics(*, study: Study, demographics: dict[str, Any]) -> dict[str, str]:
    """The study's named attributes from a demographics answer, mapped to PASTEL's choices; nothing else of it."""
    table = PLATFORM_TABLES.get(study.platform, {})
    persona: dict[str, str] = {}
    for question in questions_from_platform(study.eligibility_questions):
        name = str(question["name"])
        if name not in table:
            continue
        key, mapped = table[name]
        raw = next((demographics[k] for k in (key, *KEY_SPELLINGS.get(key, ())) if demographics.get(k) is not None),
                   None)
        if raw is None or str(raw).strip().upper() in NOT_ANSWERED:
            continue
        value, choices = mapped(str(raw)), [str(c) for c in question.get("choices") or []]
        value = value if value in choices else CHOICE_ALIASES.get(name, {}).get(value or "")
        if value is not None and value in choices:
            persona[name] = value
    return persona


def persona_platform_missing(*, study: Study, participant: Participant) -> list[str]:
    """The attributes read from the platform that this participant's persona does not hold yet."""
    return [name for name in platform_persona_attributes(study=study) if name not in (participant.persona or {})]


def persona_platform_store(*, study: Study, participant: Participant, demographics: dict[str, Any]) -> list[str]:
    """Keep the named attributes of a demographics answer on the participant (the answer itself is not kept); the
    names stored. An attribute already held is not overwritten."""
    found = {name: value for name, value in persona_from_demographics(study=study, demographics=demographics).items()
             if name not in (participant.persona or {})}
    if found:
        persona = {**(participant.persona or {}), **found}
        Participant.objects.filter(pk=participant.pk).update(persona=persona)
        participant.persona = persona
    return sorted(found)
