"""A rewrite study's persona questionnaire: PASTEL's attributes (Kang et al. 2019, table 1) and the researcher's own
questions, as multiple-choice eligibility questions that accept every answer (nobody is screened out).

A question's `choices` are the stored answers, the same in every language (English words, the age brackets, CLDR's
English country names, a researcher's values): what the platforms' demographics are matched against and what exports
carry. What the page shows is `choice_labels` {value: label} (a choice without one is shown as it is): PASTEL's
choices in the study's language (`CHOICE_LABELS`), or the labels a researcher gave their own choices
(`{"value", "label"}` pairs).

Ethnicity has no list that fits every study: ethnic categories are country-specific, and some countries restrict
collecting them. A study asking `ethnicity` says which categories (`ethnicity_question`): PASTEL's US-census list
(`ethnicity=pastel`, an English study only), Prolific's "Ethnicity (simplified)" (`ethnicity=prolific`, the five
categories of the UK's Office for National Statistics Prolific asks every participant), or its own categories with
labels. Ethnicity and political orientation are special categories of personal data (GDPR art. 9): a question asking
them, PASTEL's or the researcher's own of that name, is `special_category` and needs a separate explicit consent.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_noop, pgettext_lazy

from annotation.error_codes import ETHNICITY_CATEGORIES_REQUIRED, PERSONA_FROM_PLATFORM_UNAVAILABLE
from core.errors import ApplicationError
from core.languages import country_choices, country_names, primary_language

FIELD = "persona"
DOCS = "docs/data-protection.md (Ethnicity)"
PREFER_NOT_TO_SAY = "prefer not to say"
PERSONA_QUESTIONS: dict[str, dict[str, Any]] = {
    "gender": {"text": gettext_noop("Your gender?"), "choices": ["female", "male", "non-binary", PREFER_NOT_TO_SAY]},
    "age": {"text": gettext_noop("Your age?"), "choices": ["18-24", "25-34", "35-44", "45-54", "55-74", "75+"]},
    # PASTEL's list, the US census's: asked only by an English study that names it (`ethnicity=pastel`).
    "ethnicity": {"text": gettext_noop("Your ethnicity?"), "choices": [
        "White", "Black or African American", "Hispanic or Latino", "Asian", "Native American", "Pacific Islander",
        "mixed", "other", PREFER_NOT_TO_SAY], "special_category": True},
    # Every ISO 3166-1 country and territory (CLDR's English names, collated), not PASTEL's five English-speaking ones.
    "country": {"text": gettext_noop("The country you live in?"),
                "choices": [*country_names("en"), PREFER_NOT_TO_SAY]},
    "education": {"text": gettext_noop("Your highest education?"), "choices": [
        "no degree", "high school", "associate degree", "bachelor's degree", "master's degree", "doctorate",
        PREFER_NOT_TO_SAY]},
    "political_orientation": {"text": gettext_noop("Your political orientation?"), "choices": [
        "left", "left of centre", "centre", "right of centre", "right", PREFER_NOT_TO_SAY], "special_category": True},
}
# The ethnicity lists a study may name: PASTEL's (English studies only) and Prolific's "Ethnicity (simplified)",
# whose values are Prolific's own (its export's; `persona_platform` reads them unchanged), in Prolific's order.
ETHNICITY_LISTS: dict[str, list[str]] = {
    "pastel": PERSONA_QUESTIONS["ethnicity"]["choices"],
    "prolific": ["White", "Mixed", "Asian", "Black", "Other", PREFER_NOT_TO_SAY],
}
ENGLISH_ONLY_LISTS = frozenset({"pastel"})
SPECIAL_CATEGORY_ATTRIBUTES = frozenset(name for name, q in PERSONA_QUESTIONS.items() if q.get("special_category"))

# A choice's label in the study's language (the "persona" context: "left" is a political orientation here). The age
# brackets need none; the countries are named by CLDR (core.languages.country_choices); PASTEL's US-census ethnicity
# list is asked in English only, so it needs none either.
CHOICE_LABELS: dict[str, Promise] = {
    "female": pgettext_lazy("persona", "female"), "male": pgettext_lazy("persona", "male"),
    "non-binary": pgettext_lazy("persona", "non-binary"),
    PREFER_NOT_TO_SAY: pgettext_lazy("persona", "prefer not to say"),
    "White": pgettext_lazy("persona", "White"), "Mixed": pgettext_lazy("persona", "Mixed"),
    "Asian": pgettext_lazy("persona", "Asian"), "Black": pgettext_lazy("persona", "Black"),
    "Other": pgettext_lazy("persona", "Other"),
    "no degree": pgettext_lazy("persona", "no degree"), "high school": pgettext_lazy("persona", "high school"),
    "associate degree": pgettext_lazy("persona", "associate degree"),
    "bachelor's degree": pgettext_lazy("persona", "bachelor's degree"),
    "master's degree": pgettext_lazy("persona", "master's degree"), "doctorate": pgettext_lazy("persona", "doctorate"),
    "left": pgettext_lazy("persona", "left"), "left of centre": pgettext_lazy("persona", "left of centre"),
    "centre": pgettext_lazy("persona", "centre"), "right of centre": pgettext_lazy("persona", "right of centre"),
    "right": pgettext_lazy("persona", "right"),
}


def persona_questions_build(*, attributes: list[str | dict[str, Any]], language: str = "en",
                            read_from_platform: Collection[str] = ()) -> list[dict[str, Any]]:
    """The persona questionnaire in the study's `language`. An entry is `pastel` (every PASTEL attribute, its
    ethnicity list included), a PASTEL attribute's name (`ethnicity=LIST` for ethnicity), or an own question
    `{name, text, choices}` whose choices are values or `{"value", "label"}` pairs (kept as written). The attributes
    `read_from_platform` (Prolific's) not named are added; they cannot have own choices, and `ethnicity` read from
    Prolific is Prolific's list unless the study names PASTEL's. Any problem: an ApplicationError naming the question
    (`persona`), nothing built."""
    entries = [e for entry in attributes for e in (pastel_attributes() if entry == "pastel" else [entry])]
    questions = [_question(entry, n=n, language=language, read_from_platform=read_from_platform)
                 for n, entry in enumerate(entries, start=1)]
    names = [q["name"] for q in questions]
    repeated = sorted(name for name, count in Counter(names).items() if count > 1)
    if repeated:
        raise ApplicationError(f"Persona: {', '.join(repeated)} asked more than once.", field=FIELD,
                               details={FIELD: [f"repeated: {', '.join(repeated)}"]})
    added = [name for name in read_from_platform if name not in names]
    return [*questions, *(_question(name, n=len(questions) + k, language=language, read_from_platform=added)
                          for k, name in enumerate(added, start=1))]


def pastel_attributes() -> list[str]:
    """PASTEL's questionnaire (`--persona pastel`): every attribute, ethnicity with PASTEL's own list."""
    return [f"{name}=pastel" if name == "ethnicity" else name for name in PERSONA_QUESTIONS]


def _question(entry: str | dict[str, Any], *, n: int, language: str,
              read_from_platform: Collection[str]) -> dict[str, Any]:
    if isinstance(entry, dict):
        return _own_question(entry, n=n, language=language, read_from_platform=read_from_platform)
    name, has_list, listed = str(entry).partition("=")
    name, listed = name.strip(), listed.strip()
    if name == "ethnicity":
        # A plain `ethnicity` keeps its earlier meaning in an English study (PASTEL's list), so existing commands and
        # studies build as before; any other language must say which categories fit its country.
        default = "prolific" if name in read_from_platform else ("pastel" if primary_language(language) == "en" else "")
        return ethnicity_question(listed or default, n=n, language=language)
    if has_list:
        raise ApplicationError(f"Persona: question {n} ({entry!r}): only ethnicity takes a list "
                               f"(ethnicity={'|'.join(ETHNICITY_LISTS)}).", field=FIELD)
    if name not in PERSONA_QUESTIONS:
        raise ApplicationError(f"Persona: unknown attribute {entry!r}; known: {sorted(PERSONA_QUESTIONS)}, 'pastel' "
                               "for all of them, or give a JSON file of questions.", field=FIELD)
    return persona_question(name, language=language)


def ethnicity_question(listed: str, *, n: int = 1, language: str = "en") -> dict[str, Any]:
    """The ethnicity question with the named list (`pastel`, `prolific`) in `language`; a refusal naming the options
    when no list is named, the list is unknown, or PASTEL's US-census list is asked outside an English study."""
    where = f"Persona: question {n} (ethnicity"
    options = ("ethnicity=prolific (Prolific's five categories: White, Mixed, Asian, Black, Other), ethnicity=pastel "
               "(PASTEL's US-census list, English studies only) or an own question {\"name\": \"ethnicity\", "
               "\"choices\": [{\"value\": …, \"label\": …}, …]} with the categories that fit the study's country")
    if not listed:
        problem = "ethnic categories differ from country to country (and some countries restrict collecting them), " \
                  "so say which"
    elif listed not in ETHNICITY_LISTS:
        problem = f"no list named {listed!r}"
    elif listed in ENGLISH_ONLY_LISTS and primary_language(language) != "en":
        problem = (f"PASTEL's list is the US census's, offered to English studies only, and this study's language is "
                   f"{language!r}")
    else:
        return persona_question("ethnicity", language=language, choices=ETHNICITY_LISTS[listed])
    raise ApplicationError(f"{where}{'=' + listed if listed else ''}): {problem}: give {options}; see {DOCS}.",
                           code=ETHNICITY_CATEGORIES_REQUIRED, field=FIELD,
                           details={FIELD: [f"question {n}: ethnicity needs categories that fit the study"]})


def persona_question(name: str, *, language: str = "en", choices: list[str] | None = None) -> dict[str, Any]:
    """PASTEL's question `name` (with `choices` instead of its own where given) in `language`: its text translated
    (the catalog; English where it has none) and `choice_labels` {value: label} for the choices shown otherwise than
    their stored value, in the language's order (countries collated by their names in it). The choices, the stored
    answers, are the same in every language; an English study's question is the English one, without labels."""
    question = {"name": name, "persona": True, **PERSONA_QUESTIONS[name]}
    if choices is not None:
        question["choices"] = list(choices)
    if primary_language(language) == "en":
        return question
    with translation.override(language):
        question["text"] = gettext(question["text"])
        if name == "country":
            pairs = [*country_choices(language), (PREFER_NOT_TO_SAY, str(CHOICE_LABELS[PREFER_NOT_TO_SAY]))]
        else:
            pairs = [(value, str(CHOICE_LABELS.get(value, value))) for value in question["choices"]]
    question["choices"] = [value for value, _ in pairs]
    question["choice_labels"] = {value: label for value, label in pairs if label != value}
    return question


def _own_question(entry: dict[str, Any], *, n: int, language: str,
                  read_from_platform: Collection[str]) -> dict[str, Any]:
    """A researcher's question `{name, text, choices, special_category}`, kept as written: `choices` a list of values
    or `{"value", "label"}` pairs (`ethnicity` may instead name a list: `"choices": "prolific"`). Without a text,
    a PASTEL attribute's name gets PASTEL's text in `language`; a question named like a special-category attribute
    (ethnicity, political orientation) is special-category whatever it says."""
    name, choices = str(entry.get("name") or "").strip(), entry.get("choices")
    if not name:
        raise ApplicationError(f"Persona: question {n} needs a 'name' and a list of at least 2 'choices'.",
                               field=FIELD, details={FIELD: [f"question {n}: no name"]})
    if isinstance(choices, str) and name == "ethnicity":
        return ethnicity_question(choices.strip(), n=n, language=language)
    if name in read_from_platform:
        raise ApplicationError(
            f"Persona: question {n} ({name}) is read from the platform (persona_from_platform), so its choices are "
            f"the platform's mapped ones: name it ({name}{'=prolific' if name == 'ethnicity' else ''}) instead of "
            "giving own choices.", code=PERSONA_FROM_PLATFORM_UNAVAILABLE, field=FIELD,
            details={FIELD: [f"question {n} ({name}): own choices cannot be read from the platform"]})
    pairs = choice_pairs(choices, where=f"question {n} ({name})")
    text = str(entry.get("text") or "").strip()
    if not text and name in PERSONA_QUESTIONS:
        with translation.override(language):
            text = gettext(PERSONA_QUESTIONS[name]["text"])
    question: dict[str, Any] = {"name": name, "text": text or name, "choices": [value for value, _ in pairs],
                                "persona": True}
    labels = {value: label for value, label in pairs if label != value}
    if labels:
        question["choice_labels"] = labels
    if entry.get("special_category") or name in SPECIAL_CATEGORY_ATTRIBUTES:
        question["special_category"] = True
    return question


def choice_pairs(choices: Any, *, where: str) -> list[tuple[str, str]]:
    """(value, label) of each choice: a value (shown as it is) or `{"value", "label"}`. At least two, no value empty
    or repeated, no label empty or repeated; every problem named by its question and choice number, at once."""
    if not isinstance(choices, list) or len(choices) < 2:
        raise ApplicationError(f"Persona: {where} needs a list of at least 2 'choices'.", field=FIELD,
                               details={FIELD: [f"{where}: fewer than 2 choices"]})
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    for m, choice in enumerate(choices, start=1):
        value, label, wrong = _choice_pair(m, choice)
        pairs.append((value, label))
        problems += wrong
    problems += _repeats(pairs)
    if problems:
        raise ApplicationError(f"Persona: {where}: {'; '.join(problems)}.", field=FIELD,
                               details={FIELD: [f"{where}, {problem}" for problem in problems]})
    return pairs


def _choice_pair(m: int, choice: Any) -> tuple[str, str, list[str]]:
    """Choice `m`'s value, label and what is wrong with it."""
    if isinstance(choice, dict):
        value, label = (str(choice[key] if choice.get(key) is not None else "").strip() for key in ("value", "label"))
        return value, label, [*(f"choice {m}: empty '{key}'" for key, text in (("value", value), ("label", label))
                                if not text),
                              *(f"choice {m}: unknown key '{key}'" for key in sorted(set(choice) - {"value", "label"}))]
    if isinstance(choice, (str, int, float)) and not isinstance(choice, bool):
        value = str(choice).strip()
        return value, value, [] if value else [f"choice {m}: empty value"]
    return "", "", [f"choice {m}: a value or {{\"value\", \"label\"}}, not {choice!r}"]


def _repeats(pairs: list[tuple[str, str]]) -> list[str]:
    """A value given twice, and a label shown for two values (the participant could not tell them apart)."""
    problems: list[str] = []
    values: dict[str, int] = {}
    labels: dict[str, int] = {}
    for m, (value, label) in enumerate(pairs, start=1):
        if value and value in values:
            problems.append(f"choice {m}: value {value!r} repeats choice {values[value]}")
        elif label and label in labels:
            problems.append(f"choice {m}: label {label!r} repeats choice {labels[label]}")
        values.setdefault(value, m)
        labels.setdefault(label, m)
    return problems
