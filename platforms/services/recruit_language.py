"""Recruitment by the study's language: the platform filter that keeps the study to speakers of its language
(Prolific: its "First language" or "Fluent languages" filter, ids read from Prolific's filter list; MTurk: none, it
has only a locale qualification), chosen by the platform study's `language_filter` option."""
from __future__ import annotations

from typing import Any

from core.errors import ApplicationError
from core.languages import language_english_name, primary_language
from platforms.backends.base import PlatformBackend
from platforms.models import PlatformStudy

LANGUAGE_FILTERS = ("auto", "first", "fluent", "off")


def language_filter_checked(value: str) -> str:
    """The platform study's `language_filter` option, refused in plain words when it is none of the four."""
    if value not in LANGUAGE_FILTERS:
        raise ApplicationError(f"Language filter: {value!r} is not one of {', '.join(LANGUAGE_FILTERS)}.",
                               field="language_filter")
    return value


def language_filter_kind(*, mode: str, language: str) -> str:
    """"first", "fluent" or "" (none): `auto` asks for the first-language filter unless the study is English, whose
    studies keep recruiting as before (Prolific's pool is mostly English-speaking; ask with `first` or `fluent`)."""
    if mode == "auto":
        return "" if primary_language(language) == "en" else "first"
    return "" if mode == "off" else mode


def language_filters(*, platform_study: PlatformStudy, backend: PlatformBackend,
                     filters: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the study's filters with the language filter added when one applies, what was done: {language, kind,
    filter: the filter added or None, note: the plan's words about it})."""
    language = platform_study.study.language or "en"
    kind = language_filter_kind(mode=platform_study.language_filter, language=language)
    name = language_english_name(primary_language(language))
    done: dict[str, Any] = {"language": language, "language_name": name, "kind": kind, "filter": None}
    if not kind:
        why = "switched off" if platform_study.language_filter == "off" else "the study is in English"
        return filters, {**done, "note": f"Language: no language filter ({why}); the study's language is {name} "
                                         f"({language})."}
    found, note = backend.language_filter(kind=kind, language_name=name, filters=filters)
    return (filters + [found] if found else filters), {**done, "filter": found, "note": note}
