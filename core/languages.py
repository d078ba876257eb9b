"""Languages: a BCP 47 tag checked and normalised, the direction its script is written in, and a guess at the
language of a text (a study's preview warns when a researcher's text looks like another language than the study's).

langcodes checks a tag against the IANA subtag registry (`pt_BR` and `pt-br` become `pt-BR`; `english` and `xx` are
refused); langdetect guesses a text's language, seeded so that one text always gets the same guess.
"""
from __future__ import annotations

import langcodes
from langdetect import DetectorFactory, LangDetectException, detect_langs

# Languages written right to left (Arabic, Hebrew, Persian, Urdu and their neighbours in the same scripts).
RTL_LANGUAGES = frozenset({"ar", "he", "fa", "ur", "yi", "ps", "sd", "dv", "ug", "ckb", "iw"})
GUESS_MIN_CHARACTERS = 40  # shorter texts give unreliable guesses: no warning is raised for them
GUESS_MIN_PROBABILITY = 0.8


def language_normalise(tag: str) -> str | None:
    """The tag in its standard form (`pt_br` → `pt-BR`), or None when it is not a valid BCP 47 tag."""
    tag = (tag or "").strip().replace("_", "-")
    if not tag or not langcodes.tag_is_valid(tag):
        return None
    return str(langcodes.standardize_tag(tag))


def language_direction(tag: str) -> str:
    """`rtl` for a language written right to left (or a tag naming an RTL script such as `-Arab`), else `ltr`."""
    try:
        parsed = langcodes.Language.get(tag or "en")
    except (ValueError, LookupError):
        return "ltr"
    if parsed.script:
        return "rtl" if parsed.script in {"Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm", "Rohg"} else "ltr"
    return "rtl" if parsed.language in RTL_LANGUAGES else "ltr"


def language_name(tag: str) -> str:
    """The language's English name (`pt-BR` → `Portuguese (Brazil)`), for researchers' messages."""
    try:
        return str(langcodes.Language.get(tag).display_name())
    except (ValueError, LookupError):
        return tag


def language_guess(text: str) -> str | None:
    """The language a text looks like (a bare language subtag, `fr`), or None when the text is too short or no
    language is likely enough. Deterministic: langdetect's random seed is fixed."""
    text = (text or "").strip()
    if len(text) < GUESS_MIN_CHARACTERS:
        return None
    DetectorFactory.seed = 0
    try:
        best = detect_langs(text)[0]
    except (LangDetectException, IndexError):
        return None
    if best.prob < GUESS_MIN_PROBABILITY:
        return None
    return str(best.lang).split("-")[0]


def language_matches(guess: str, tag: str) -> bool:
    """Whether a guessed language is the study's (`fr` matches `fr-CA`; `zh-cn` matches `zh-Hant`)."""
    return guess.split("-")[0].lower() == (tag or "en").split("-")[0].lower()
