"""The default eligibility question in the study's language: "Is <language> your native language?", the language
named in itself (CLDR through ICU: `français`, `العربية`). The sentence is written for the languages the project
ships (English, French, German, Brazilian Portuguese, Italian, Spanish, Arabic); any other language gets the English
sentence with the language's English name and its own (`Is Japanese (日本語) your native language?`), which a
researcher should replace by their own question in the study's language."""
from __future__ import annotations

from typing import Any

from core.languages import language_name, primary_language

# primary language → (the question with {name}, yes, no); written by the StyleCrowd authors.
QUESTIONS: dict[str, tuple[str, str, str]] = {
    "en": ("Is {name} your native language?", "yes", "no"),
    "fr": ("Le {name} est-il votre langue maternelle\u202f?", "oui", "non"),
    "de": ("Ist {name} Ihre Muttersprache?", "ja", "nein"),
    "pt": ("O {name} é a sua língua materna?", "sim", "não"),
    "it": ("L'{name} è la sua lingua madre?", "sì", "no"),
    "es": ("¿Es el {name} su lengua materna?", "sí", "no"),
    "ar": ("هل {name} لغتك الأم؟", "نعم", "لا"),
}


def eligibility_default(*, language: str) -> list[dict[str, Any]]:
    """The default eligibility questions of a study in `language` (a BCP 47 tag): one, accepting "yes"."""
    primary = primary_language(language)
    if primary == "en":  # the name English studies have always had (answers and exports refer to it)
        return [{"name": "native_english", "text": "Is English your native language?", "choices": ["yes", "no"],
                 "accept": ["yes"]}]
    if primary in QUESTIONS:
        text, yes, no = QUESTIONS[primary]
        text = text.format(name=language_name(primary))
    else:
        yes, no = "yes", "no"
        text = (f"Is {language_name(primary, in_language='en')} ({language_name(primary)}) "
                "your native language?")
    return [{"name": f"native_{primary}", "text": text, "choices": [yes, no], "accept": [yes]}]
