"""Screening questions a study may use: active ones of its components; a study asking for more is refused."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind
from annotation.services.screening import screening_questions_for, screening_require
from core.errors import ApplicationError
from tests.factories import ScreeningQuestionFactory, component

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
