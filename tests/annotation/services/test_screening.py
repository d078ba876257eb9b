"""Screening questions a study may use: active ones of its components; a study asking for more is refused."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind, Study
from annotation.selectors import study_language
from annotation.services.screening import screening_questions_for, screening_require, study_screening_pool
from annotation.services.study_setup import study_open
from core.errors import ApplicationError
from tests.factories import (
    CorpusFactory,
    ScreeningQuestionFactory,
    StudyFactory,
    StudyItemFactory,
    TaskInstanceFactory,
    component,
)

pytestmark = pytest.mark.django_db


def test_only_active_questions_of_the_components_are_offered():
    formality = component("formality")
    kept = ScreeningQuestionFactory(component=formality)
    ScreeningQuestionFactory(component=formality, active=False)
    found = screening_questions_for(setup=ItemKind.QUADRUPLE, component_ids=[formality.pk])
    assert kept in found and all(q.active and q.component_id == formality.pk for q in found)


def test_a_study_asking_for_more_questions_than_exist_is_refused():
    formality = component("formality")
    have = len(screening_questions_for(setup=ItemKind.QUADRUPLE, component_ids=[formality.pk]))
    with pytest.raises(ApplicationError, match="Screening questions per batch"):
        screening_require(item_kind=ItemKind.QUADRUPLE, component_ids=[formality.pk], screening_per_batch=have + 1)
    screening_require(item_kind=ItemKind.LIKERT, component_ids=[formality.pk], screening_per_batch=have + 1)


# --- in-language screening (issue 33) ---------------------------------------------------------------------


def _french_study(screening_per_batch: int = 2) -> Study:
    formality = component("formality")
    corpus = CorpusFactory(component=formality, language="fr")
    study = StudyFactory(status=Study.Status.DRAFT, screening_per_batch=screening_per_batch, language="fr")
    StudyItemFactory(study=study, instance=TaskInstanceFactory(corpus=corpus))
    return study


def test_questions_are_offered_in_the_studys_language_only():
    formality = component("formality")
    english = ScreeningQuestionFactory(component=formality)
    brazilian = ScreeningQuestionFactory(component=formality, language="pt-BR")
    portugal = ScreeningQuestionFactory(component=formality, language="pt-PT")
    found = screening_questions_for(setup=ItemKind.QUADRUPLE, component_ids=[formality.pk], language="pt-BR")
    assert brazilian in found and english not in found and portugal not in found
    assert brazilian in screening_questions_for(setup=ItemKind.QUADRUPLE, component_ids=[formality.pk],
                                                language="pt")
    assert english.language == "en"  # the default: every question stored before languages is English


def test_a_study_draws_screening_questions_in_its_language():
    study = _french_study()
    formality = component("formality")
    ScreeningQuestionFactory(component=formality)  # English: never shown in a French study
    french = [ScreeningQuestionFactory(component=formality, language="fr") for _ in range(2)]
    assert study_language(study) == "fr"
    assert sorted(q.pk for q in study_screening_pool(study=study)) == sorted(q.pk for q in french)


def test_a_study_without_enough_questions_in_its_language_refuses_to_open():
    study = _french_study(screening_per_batch=2)
    formality = component("formality")
    for _ in range(3):
        ScreeningQuestionFactory(component=formality)  # plenty in English, none in French
    ScreeningQuestionFactory(component=formality, language="fr")
    with pytest.raises(ApplicationError) as refused:
        study_open(study=study)
    assert refused.value.code == "no_screening_in_language" and refused.value.status == 409
    assert "only 1 active one(s) in its language (fr)" in refused.value.message
    assert "loaddata screening_questions" in refused.value.message and "set its language" in refused.value.message
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT
    ScreeningQuestionFactory(component=formality, language="fr")
    assert study_open(study=study).status == Study.Status.ACTIVE


def test_creating_a_study_counts_only_questions_in_its_language():
    formality = component("formality")
    for _ in range(3):
        ScreeningQuestionFactory(component=formality)
    with pytest.raises(ApplicationError) as refused:
        screening_require(item_kind=ItemKind.QUADRUPLE, component_ids=[formality.pk], screening_per_batch=2,
                          language="de")
    assert refused.value.code == "invalid" and "language (de)" in refused.value.message  # creation's code of before
    screening_require(item_kind=ItemKind.QUADRUPLE, component_ids=[formality.pk], screening_per_batch=2)
