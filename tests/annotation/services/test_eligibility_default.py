"""The default eligibility question in the study's language (issue 33)."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind
from annotation.services.eligibility_default import eligibility_default
from annotation.services.studies import study_create
from annotation.services.study_settings import study_settings_build
from tests.factories import CorpusFactory, TaskInstanceFactory


def test_french_and_arabic_ask_in_their_own_language_with_their_own_name():
    french = eligibility_default(language="fr")[0]
    assert french["text"] == "Le français est-il votre langue maternelle\u202f?"
    assert french["choices"] == ["oui", "non"] and french["accept"] == ["oui"] and french["name"] == "native_fr"
    arabic = eligibility_default(language="ar")[0]
    assert arabic["text"] == "هل العربية لغتك الأم؟" and arabic["accept"] == ["نعم"]


@pytest.mark.parametrize(("tag", "text"), [
    ("de", "Ist Deutsch Ihre Muttersprache?"), ("pt-BR", "O português é a sua língua materna?"),
    ("it", "L'italiano è la sua lingua madre?"), ("es", "¿Es el español su lengua materna?"),
    ("en-GB", "Is English your native language?"), ("th", "Is Thai (ไทย) your native language?"),
])
def test_every_language_has_a_default(tag: str, text: str):
    assert eligibility_default(language=tag)[0]["text"] == text


@pytest.mark.django_db
def test_a_study_of_a_french_corpus_asks_the_french_question():
    corpus = CorpusFactory(language="fr")
    TaskInstanceFactory(corpus=corpus)
    study = study_create(slug="fr-quads", item_kind=ItemKind.QUADRUPLE, corpus=[corpus.name],
                         settings=study_settings_build(item_kind=ItemKind.QUADRUPLE, screening_per_batch=0))
    assert study.eligibility_questions == eligibility_default(language="fr")
    assert study.eligibility_questions[0]["text"].startswith("Le français")
