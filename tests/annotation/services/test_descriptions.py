"""task_description_compose: the instructions name the setup's sentences and each component's two styles."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind
from annotation.services.descriptions import task_description_compose
from tests.factories import component

pytestmark = pytest.mark.django_db


def test_quadruple_instructions_speak_of_anchors_and_both_answers():
    text = task_description_compose(setup=ItemKind.QUADRUPLE, components=[component("formality")])
    assert "A1 and A2" in text and '"S1-S2"' in text and '"S2-S1"' in text


def test_triple_and_quadruple_instructions_differ():
    formality = [component("formality")]
    assert task_description_compose(setup=ItemKind.TRIPLE, components=formality) != task_description_compose(
        setup=ItemKind.QUADRUPLE, components=formality)
