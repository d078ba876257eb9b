"""Words, characters, questions and names by language (ICU): core/languages.py."""
from __future__ import annotations

import pytest

from core.languages import (
    country_choices,
    country_names,
    grapheme_count,
    is_question,
    language_direction,
    language_guess,
    language_matches,
    language_name,
    language_normalise,
    languages_match,
    question_marks,
    word_count,
    words,
)


def test_words_of_scripts_without_spaces():
    assert words("ฉันชอบกินข้าวผัด", language="th") == ["ฉัน", "ชอบ", "กิน", "ข้าว", "ผัด"]
    assert word_count("私は東京に住んでいます。", language="ja") > 4
    assert words("Hello, dear friend: 42 times.") == ["Hello", "dear", "friend", "42", "times"]


def test_question_marks_come_from_unicode_names():
    marks = question_marks()
    assert {"?", "？", "؟", "՞", "፧", "¿", "\u037e", "⸮", "﹖"} <= marks
    assert not {";", "!", "."} & marks  # the ASCII semicolon is a question mark in Greek only
    assert is_question("Πού είσαι;", language="el") and not is_question("a; b", language="en")


def test_graphemes_count_what_people_see():
    assert grapheme_count("e\u0301te\u0301") == 3 and len("e\u0301te\u0301") == 5
    assert grapheme_count("👍🏽") == 1


def test_names_and_countries_come_from_cldr():
    assert language_name("fr") == "français" and language_name("ar") == "العربية"
    assert language_name("ja", in_language="en") == "Japanese"
    countries = country_names()
    assert len(countries) > 240 and {"Brazil", "Nigeria", "Indonesia", "Viet Nam" if "Viet Nam" in countries
                                     else "Vietnam"} <= set(countries)
    assert list(countries).index("Åland Islands") < list(countries).index("Albania")  # collated, not code-point
    assert "Allemagne" in country_names("fr")


@pytest.mark.parametrize(("a", "b", "match"), [
    ("pt-BR", "pt", True), ("pt-BR", "pt-PT", False), ("pt_BR", "pt-br", True), ("en", "fr", False),
    ("zh-Hant", "zh", True),
])
def test_languages_match(a: str, b: str, match: bool):
    assert languages_match(a, b) is match



@pytest.mark.parametrize(("given", "expected"), [
    ("fr", "fr"), ("pt_BR", "pt-BR"), ("pt-br", "pt-BR"), ("zh-hant", "zh-Hant"), (" de ", "de"), ("ar", "ar"),
])
def test_a_valid_tag_is_normalised(given, expected):
    assert language_normalise(given) == expected


@pytest.mark.parametrize("given", ["", "english", "xx", "fr-XYZ1", "e n", "12"])
def test_a_tag_that_is_not_bcp47_is_refused(given):
    assert language_normalise(given) is None


@pytest.mark.parametrize(("tag", "direction"), [
    ("ar", "rtl"), ("he", "rtl"), ("fa-IR", "rtl"), ("ur", "rtl"), ("az-Arab", "rtl"),
    ("fr", "ltr"), ("en", "ltr"), ("pt-BR", "ltr"), ("", "ltr"),
])
def test_direction_of_a_language(tag, direction):
    assert language_direction(tag) == direction


def test_the_guess_is_deterministic_and_says_nothing_on_short_texts():
    french = "Vous allez lire de courtes phrases et choisir celle qui est la plus formelle des deux."
    assert {language_guess(french) for _ in range(5)} == {"fr"}
    assert language_guess("Merci") is None
    assert language_matches("fr", "fr-CA") and not language_matches("en", "fr")


def test_country_choices_keep_the_english_value_and_name_it_in_the_language() -> None:
    french, german = dict(country_choices("fr")), dict(country_choices("de"))
    assert set(french) == set(german) == set(country_names("en"))  # the values: the English names, in any language
    assert french["Germany"] == "Allemagne" and german["Germany"] == "Deutschland"
    assert dict(country_choices("ar"))["Morocco"] == "المغرب"
    labels = [label for _, label in country_choices("de")]
    assert labels.index("Österreich") < labels.index("Polen")  # German collation: Ö with the O's
