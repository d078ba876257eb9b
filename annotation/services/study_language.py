"""A study's language on the participant side: the language the participant API speaks for the rest of a request,
and the preview's warning when a researcher's own texts look like another language than the study's.

The participant pages and the annotator API's participant-facing messages are Django gettext strings, translated
by the catalogs under `locale/` (docs/annotator-api.md, "Languages"); the researcher's texts (consent, instructions,
questions, examples) are shown as written, so a text in another language is almost always a mistake worth saying.
"""
from __future__ import annotations

from typing import Any

from django.utils import translation

from annotation.models import Study
from core.errors import ApplicationError
from core.languages import language_english_name, language_guess, language_matches, language_normalise
from tasks.error_codes import INVALID_LANGUAGE


def participant_language_activate(study: Study) -> None:
    """The rest of this request speaks `study`'s language (its gettext catalog; English where it has none).
    Called where a participant's session or study is loaded; `ParticipantView.dispatch` restores the default
    language when the request ends, so nothing leaks into the next request on the thread."""
    translation.activate(study.language)


def _researcher_texts(study: Study) -> list[tuple[str, str]]:
    """(where, text) for each text the researcher wrote that participants read as written."""
    texts = [("consent text", study.consent_text), ("task description", study.task_description),
             ("special-category consent", study.special_category_consent)]
    for question in [*(study.eligibility_questions or []), *(study.questions or [])]:
        if isinstance(question, dict):
            texts.append((f"question {question.get('name', '')!s}", str(question.get("text") or "")))
    return [(where, text) for where, text in texts if text and text.strip()]


def study_language_warnings(*, study: Study) -> list[dict[str, Any]]:
    """The researcher's texts that look like another language than the study's (a langdetect guess, seeded),
    each with what it looks like: the preview shows them, since a mismatch is usually a mistake."""
    warnings = []
    for where, text in _researcher_texts(study):
        guess = language_guess(text)
        if guess is not None and not language_matches(guess, study.language):
            warnings.append({
                "where": where, "looks_like": guess,
                "message": f"The {where} looks like {language_english_name(guess)} ({guess}), but the study's language "
                           f"is {language_english_name(study.language)} ({study.language}): participants read it as "
                           "written.",
            })
    return warnings


def study_language_check(language: str) -> str:
    """A study's language in its standard BCP 47 form ("" stays "": the corpus's language, else en)."""
    if not language.strip():
        return ""
    normalised = language_normalise(language)
    if normalised is None:
        raise ApplicationError(
            f"Language must be a BCP 47 tag such as en, fr, pt-BR or ar, not {language!r}.", code=INVALID_LANGUAGE,
            details={"language": ["not a BCP 47 language tag"]}, field="language")
    return normalised
