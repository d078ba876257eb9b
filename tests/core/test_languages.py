"""core.languages: BCP 47 tags checked and normalised, the script's direction, a seeded language guess."""
from __future__ import annotations

import pytest

from core.languages import language_direction, language_guess, language_matches, language_normalise


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
