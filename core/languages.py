"""Languages: a BCP 47 tag checked and normalised, the direction its script is written in, a guess at the language
of a text (a study's preview warns when a researcher's text looks like another language than the study's), and text
in any language: words, characters, questions and names, by the text's language tag.

langcodes checks a tag against the IANA subtag registry (`pt_BR` and `pt-br` become `pt-BR`; `english` and `xx` are
refused); langdetect guesses a text's language, seeded so that one text always gets the same guess.

Counting words with `str.split()` is wrong for scripts written without spaces (Chinese, Japanese, Thai, Khmer,
Lao, Burmese) and finding questions by `"?"` misses `？`, `؟`, `՞`, `፧` and the Greek `;`. The segmentation is
ICU's (PyICU; CLDR's rules and ICU's dictionaries for the scripts without spaces), the maintained library browsers
and operating systems use; so are the names of languages and countries (CLDR data). ICU needs `libicu-dev` to build
PyICU (README, "Install").
"""
from __future__ import annotations

import sys
import unicodedata
from functools import lru_cache

import icu
from langdetect import DetectorFactory, LangDetectException, detect_langs

# Languages written right to left (Arabic, Hebrew, Persian, Urdu and their neighbours in the same scripts).
RTL_LANGUAGES = frozenset({"ar", "he", "fa", "ur", "yi", "ps", "sd", "dv", "ug", "ckb", "iw"})
GUESS_MIN_CHARACTERS = 40  # shorter texts give unreliable guesses: no warning is raised for them
GUESS_MIN_PROBABILITY = 0.8


def language_normalise(tag: str) -> str | None:
    """The tag in its standard form (`pt_br` → `pt-BR`), or None when it is not a valid BCP 47 tag."""
    # heavy: langcodes' data tables (about 50 ms) load when a tag is first read, not in every process's set-up
    import langcodes

    tag = (tag or "").strip().replace("_", "-")
    if not tag or not langcodes.tag_is_valid(tag):
        return None
    return str(langcodes.standardize_tag(tag))


def language_direction(tag: str) -> str:
    """`rtl` for a language written right to left (or a tag naming an RTL script such as `-Arab`), else `ltr`."""
    # heavy: langcodes loads when a tag is first read
    import langcodes

    try:
        parsed = langcodes.Language.get(tag or "en")
    except (ValueError, LookupError):
        return "ltr"
    if parsed.script:
        return "rtl" if parsed.script in {"Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm", "Rohg"} else "ltr"
    return "rtl" if parsed.language in RTL_LANGUAGES else "ltr"


def language_english_name(tag: str) -> str:
    """The language's English name (`pt-BR` → `Portuguese (Brazil)`), for researchers' messages."""
    # heavy: langcodes loads when a tag is first read
    import langcodes

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


# ICU's rule status of a word segment: 0-99 is "none" (spaces, punctuation), 100+ numbers, letters, kana, ideographs.
_UBRK_WORD_NONE_LIMIT = 100
# Languages whose question mark is a character other scripts use for something else: Greek's `;` (U+037E, the
# GREEK QUESTION MARK, is canonically equivalent to the semicolon and normalizes to it).
_LANGUAGE_QUESTION_MARKS = {"el": frozenset(";\u037e"), "grc": frozenset(";\u037e")}


def primary_language(tag: str) -> str:
    """`pt-BR` → `pt`; `zh_Hant` → `zh`; empty → `en`."""
    return (tag or "en").strip().replace("_", "-").split("-")[0].lower() or "en"


def languages_match(tag: str, other: str) -> bool:
    """Whether texts in `tag` suit a study in `other`: the same language, and the same region where both name one
    (`pt-BR` suits `pt` and `pt-BR`, not `pt-PT`)."""
    a, b = (str(t or "en").strip().replace("_", "-").lower().split("-") for t in (tag, other))
    if a[0] != b[0]:
        return False
    regions = [[part for part in parts[1:] if len(part) == 2 or part.isdigit()] for parts in (a, b)]
    return not (regions[0] and regions[1]) or regions[0] == regions[1]


def _locale(tag: str) -> icu.Locale:
    return icu.Locale.forLanguageTag((tag or "en").strip().replace("_", "-"))


@lru_cache(maxsize=1)
def question_marks() -> frozenset[str]:
    """Every punctuation mark or symbol Unicode names a question mark or an interrobang (`?`, `？`, `¿`, `؟`, `՞`,
    `፧`, `;` GREEK QUESTION MARK, `⸮`, `﹖`, `⁇`, `⁈`, `‽`, …): the list written once, by the standard, not by hand
    (mathematical symbols and invisible tag characters left out)."""
    return frozenset(chr(code) for code in range(sys.maxunicode + 1) if _is_question_mark(chr(code)))


def _is_question_mark(character: str) -> bool:
    name = unicodedata.name(character, "")
    category = unicodedata.category(character)
    return ("QUESTION" in name or "INTERROBANG" in name) and (category.startswith("P") or category == "So")


def is_question(text: str, *, language: str = "en") -> bool:
    """Whether `text` holds a question mark of any script (and `;` in Greek)."""
    marks = question_marks() | _LANGUAGE_QUESTION_MARKS.get(primary_language(language), frozenset())
    return any(character in marks for character in text)


def words(text: str, *, language: str = "en") -> list[str]:
    """The words of `text` by ICU's word segmentation for `language` (dictionary-based for Thai, Japanese,
    Chinese…); spaces and punctuation are not words, numbers are."""
    iterator = icu.BreakIterator.createWordInstance(_locale(language))
    iterator.setText(text)
    found, start = [], 0
    for end in iterator:
        if iterator.getRuleStatus() >= _UBRK_WORD_NONE_LIMIT:
            found.append(text[start:end])
        start = end
    return found


def word_count(text: str, *, language: str = "en") -> int:
    return len(words(text, language=language))


def grapheme_count(text: str, *, language: str = "en") -> int:
    """User-perceived characters (extended grapheme clusters): `é` typed as e + accent, a Thai consonant with its
    vowel sign, an emoji with its skin tone each count once, as a participant counts them."""
    iterator = icu.BreakIterator.createCharacterInstance(_locale(language))
    iterator.setText(text)
    return sum(1 for _ in iterator)


def language_name(tag: str, *, in_language: str | None = None) -> str:
    """The language's name (language only, no region) in `in_language` (default: in itself): `fr` → `français`,
    `ar` → `العربية`, `ja` in `en` → `Japanese` (CLDR through ICU)."""
    locale = _locale(tag)
    return locale.getDisplayLanguage(_locale(in_language or tag)) or tag


@lru_cache(maxsize=8)
def country_names(in_language: str = "en") -> tuple[str, ...]:
    """Every ISO 3166-1 country and territory ICU knows, named in `in_language`, sorted by that language's collation
    (`Åland Islands` among the A's)."""
    display = _locale(in_language)
    names = {icu.Locale("", code).getDisplayCountry(display) for code in icu.Locale.getISOCountries()}
    collator = icu.Collator.createInstance(display)
    return tuple(sorted((name for name in names if name), key=collator.getSortKey))


@lru_cache(maxsize=8)
def country_choices(in_language: str = "en") -> tuple[tuple[str, str], ...]:
    """(value, label) for every ISO 3166-1 country and territory ICU knows: the value is its English (CLDR) name, the
    stable answer whatever the study's language (what `country_names("en")` lists and the platforms' demographics
    are matched against); the label is its name in `in_language`; sorted by that language's collation of the labels
    (`Allemagne` before `Autriche` in French, however the English names sort)."""
    display, english = _locale(in_language), _locale("en")
    pairs: dict[str, str] = {}
    for code in icu.Locale.getISOCountries():
        country = icu.Locale("", code)
        value = country.getDisplayCountry(english)
        if value and value not in pairs:
            pairs[value] = country.getDisplayCountry(display) or value
    collator = icu.Collator.createInstance(display)
    return tuple(sorted(pairs.items(), key=lambda pair: collator.getSortKey(pair[1])))
