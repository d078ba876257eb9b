"""What a model annotator is asked, for every kind of item: the item's texts under the participant page's labels,
its question in the page's words, the choices, every order of display, and the answer mapped back to the canonical
form a participant's answer takes."""
from __future__ import annotations

import io
import json
import re

import pytest
from django.conf import settings
from django.core.management import call_command

from annotation.models import ItemKind, StudyItem
from annotation.services.studies import QUESTION_PRESETS, study_create
from annotation.services.study_settings import study_settings_build
from scoring.model_annotators.prompts import QUESTIONS, item_asks
from scoring.models import ModelAnswer
from tests import factories as f
from tests.scoring.fake_openai import FakeOpenAI, first_choice

pytestmark = pytest.mark.django_db


def _cli(*args: str) -> dict:
    out = io.StringIO()
    call_command("annotate_with_model", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_questions_are_worded_as_on_the_participant_page():
    script = (settings.BASE_DIR / "annotation" / "static" / "annotation" / "items.js").read_text()
    for kind, text in QUESTIONS.items():
        assert f'"{text}"' in script, (kind, text)


@pytest.mark.parametrize("kind, n_orders", [(ItemKind.QUADRUPLE, 4), (ItemKind.TRIPLE, 2),
                                            (ItemKind.STYLE_OR_CONTENT, 2)])
def test_every_order_maps_back_to_the_canonical_answer(kind, n_orders):
    study, items = f.annotated_study(answers=[["S1"]], setup=kind, correct_order="S2-S1")
    asks = item_asks(study=study, item=items[0])
    assert len(asks) == n_orders and len({a.order for a in asks}) == n_orders
    correct = items[0].correct_answer
    for ask in asks:
        # exactly one displayed choice means the correct answer in this display
        assert sorted(answer for answer, _ in ask.canonical.values()) == sorted(set(a for a, _ in
                                                                                    ask.canonical.values()))
        assert [c for c, (answer, _) in ask.canonical.items() if answer == correct].__len__() == 1
    if kind == ItemKind.TRIPLE:
        user = asks[0].question.messages[1]["content"]
        assert "Which sentence is closest in style to A1?" in user and "- S1: S1 is closer in style to A1" in user
        assert "A2:" not in user


def test_likert_items_ask_each_question_with_the_scale_up_and_down():
    study = study_create(
        slug="lik", item_kind="likert", eligibility_questions=[], questions=QUESTION_PRESETS["gyafc"],
        items=[{"id": f"x{i}", "source": f"gonna be late {i}", "rewrite": f"I will be late {i}.",
                                 "target_style": "formal", "system": "sysA"} for i in range(2)],
        settings=study_settings_build(annotators_per_item=2),
    )
    asks = item_asks(study=study, item=StudyItem.objects.filter(study=study).first())
    questions = [q["name"] for q in study.questions]
    assert [(a.question_name, a.order) for a in asks] == [(q, o) for q in questions
                                                          for o in ("scale-up", "scale-down")]
    user = asks[0].question.messages[1]["content"]
    assert "Original: gonna be late 0\nRewrite (formal): I will be late 0." in user and "sysA" not in user
    assert asks[0].question.choices[0] == str(study.questions[0]["min"])
    assert asks[1].question.choices[0] == str(study.questions[0]["max"])
    with FakeOpenAI(first_choice) as fake:
        summary = _cli("--study", "lik", "--base-url", fake.base_url, "--model", "fake-model", "--json")
    assert summary["asks"] == 2 * len(questions) * 2 and summary["order_sensitive_share"] == 1.0
    row = ModelAnswer.objects.filter(question=questions[0], order="scale-down").first()
    assert row.value == study.questions[0]["max"] and row.answer == str(study.questions[0]["max"])


def test_ranking_items_choose_an_order_of_the_outputs_both_ways():
    outputs = [{"id": "o1", "system": "sysA", "text": "one"}, {"id": "o2", "system": "sysB", "text": "two"},
               {"id": "o3", "system": "sysC", "text": "three"}]
    study_create(
        slug="rank", item_kind="ranking", eligibility_questions=[],
        items=[{"id": "r0", "source": "src", "outputs": outputs}],
        settings=study_settings_build(annotators_per_item=2),
    )
    with FakeOpenAI(first_choice) as fake:
        summary = _cli("--study", "rank", "--base-url", fake.base_url, "--model", "fake-model", "--json")
        users = sorted(r["body"]["messages"][1]["content"] for r in fake.chat_requests())
    assert "T1: one\nT2: two\nT3: three" in users[0] and "T1: three\nT2: two\nT3: one" in users[1]
    user = users[0]
    assert "Order these texts from best (top) to worst (bottom)." in user
    assert "sysA" not in user and len(re.findall(r"^- T\d > T\d > T\d$", user, flags=re.MULTILINE)) == 6
    answers = dict(ModelAnswer.objects.values_list("order", "answer"))
    # "T1 > T2 > T3" in both displays: the stored order, then the reversed one
    assert json.loads(answers["outputs-stored"]) == ["o1", "o2", "o3"]
    assert json.loads(answers["outputs-reversed"]) == ["o3", "o2", "o1"]
    assert summary["order_sensitive_share"] == 1.0
