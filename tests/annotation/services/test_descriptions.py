"""task_description_compose: the instructions name the setup's sentences and each component's two styles, in the
study's language (issue 33): every fixed sentence, contrast, worked example and built-in label from the catalog; a
researcher's own component labels as written; an English study's instructions as they always were."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind
from annotation.services.descriptions import COMPONENT_TEXTS, INTROS, task_description_compose
from tasks.models import StyleComponent
from tests.annotation.helpers import make_study
from tests.factories import component

pytestmark = pytest.mark.django_db


def test_quadruple_instructions_speak_of_anchors_and_both_answers():
    text = task_description_compose(setup=ItemKind.QUADRUPLE, components=[component("formality")])
    assert "A1 and A2" in text and '"S1-S2"' in text and '"S2-S1"' in text


def test_triple_and_quadruple_instructions_differ():
    formality = [component("formality")]
    assert task_description_compose(setup=ItemKind.TRIPLE, components=formality) != task_description_compose(
        setup=ItemKind.QUADRUPLE, components=formality)


def _english_pieces(text: str) -> list[str]:
    """The English sentences of the composition (intros, contrasts, examples, keys) found in `text`."""
    pieces = [*(intro.split("%(contrast)s")[0].strip() for intro in INTROS.values()),
              "Keys: press 1", "The styles differ in", "Example", "Answer:"]
    for entry in COMPONENT_TEXTS.values():
        pieces += [entry.contrast, *entry.anchors, *entry.sentences]
    return [piece for piece in pieces if piece in text]


def test_a_french_quadruple_study_composes_its_instructions_in_french():
    study = make_study(slug="fr-quad", language="fr", task_description="")
    text = study.task_description
    assert text.startswith("Dans chaque question, vous voyez quatre phrases : deux phrases « repères », A1 et A2")
    assert "Les styles diffèrent par leur degré de formalité" in text
    assert "  A1: j'vais être en retard mdr" in text and "  S2: tu m'aides stp" in text  # a French worked example
    assert "Réponse : S2-S1 (S2 est familière comme A1, S1 est soutenue comme A2)." in text
    assert text.endswith("Touches : appuyez sur 1 pour S1-S2, sur 2 pour S2-S1.")
    assert _english_pieces(text) == []


def test_an_english_quadruple_study_keeps_its_instructions():
    text = make_study(slug="en-quad", task_description="").task_description
    assert text.startswith('In each question you see four sentences: two "anchor" sentences, A1 and A2')
    assert "The styles differ in how formal they are: casual, chatty writing or careful, formal writing." in text
    assert "  A1: gonna be late lol\n  A2: I am going to be late.\n" in text
    assert "Answer: S2-S1 (S2 is informal like A1, S1 is formal like A2)." in text
    assert text == task_description_compose(setup=ItemKind.QUADRUPLE, components=[component("formality")],
                                            language="en")


def test_every_setup_and_component_reads_in_german_and_arabic():
    components = [component(name) for name in ("contraction", "formality", "nbr_substitution", "simplicity")]
    for language in ("de", "ar"):
        for setup in (ItemKind.QUADRUPLE, ItemKind.TRIPLE, ItemKind.STYLE_OR_CONTENT):
            text = task_description_compose(setup=setup, components=components, language=language)
            assert _english_pieces(text) == [], (language, setup)
    arabic = task_description_compose(setup=ItemKind.TRIPLE, components=components[1:2], language="ar")
    assert "الإجابة: S2 (غير رسمية، مثل A1)." in arabic and "  A1: رح أتأخر هههه" in arabic


def test_a_researchers_labels_stay_as_written():
    own = StyleComponent(name="emotives", label_1="emo", label_2="plain")
    renamed = StyleComponent(name="formality", label_1="casual", label_2="posh")  # built in, labels changed
    text = task_description_compose(setup=ItemKind.QUADRUPLE, components=[own, renamed], language="fr")
    assert "le fait qu'une phrase soit emo ou plain" in text
    assert "Réponse : S2-S1 (S2 est casual comme A1, S1 est posh comme A2)." in text
    assert "\n\nExemple\n  A1: j'vais être en retard mdr" in text  # the one worked example: no component named
