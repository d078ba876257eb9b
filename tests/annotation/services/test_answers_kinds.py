"""Likert, ranking and rewrite items: what is shown, server-side validation, canonical storage."""
from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from annotation.models import Response
from annotation.services.studies import QUESTION_PRESETS, study_create
from tests.annotation.helpers import Participant as P
from tests.annotation.helpers import (
    serving_path,  # noqa: F401 (fixture)
    settings_pop,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("serving_path")]


def _items(kind: str) -> list[dict]:
    if kind == "ranking":
        return [{"id": f"r{i}", "source": f"src {i}",
                 "outputs": [{"id": "o1", "system": "sysA", "text": "one"}, {"id": "o2", "system": "sysB",
                                                                           "text": "two"},
                             {"id": "o3", "system": "sysC", "text": "three"}]} for i in range(2)]
    return [{"id": f"x{i}", "source": f"gonna be late {i}", "rewrite": f"I will be late {i}.",
             "reference": f"I am going to be late {i}.", "target_style": "formal", "system": "sysA"}
            for i in range(2)]


def _session(kind: str, **extra) -> tuple[P, APIClient]:
    client = APIClient()
    study_create(slug=f"{kind}-study", item_kind=kind, items=_items(kind), eligibility_questions=[],
                 settings=settings_pop(extra, items_per_batch=2, annotators_per_item=2), **extra)
    p = P(client, f"{kind}-study", "PID-K")
    body = p.start()
    p.consent()
    return p, client, body


def test_likert_gyafc_preset_scales_and_validation():
    p, client, body = _session("likert", questions=QUESTION_PRESETS["gyafc"])
    questions = body["study"]["questions"]
    assert [(q["name"], q["min"], q["max"]) for q in questions] == [
        ("formality", -3, 3), ("fluency", 1, 5), ("meaning", 1, 6)]
    item = p.next().json()["item"]
    assert item["kind"] == "likert" and item["choices"] == []
    assert set(item["texts"]) == {"source", "rewrite", "reference", "target_style"}
    assert "sysA" not in json.dumps(item)  # the system is never shown
    for bad in ({"formality": 4, "fluency": 3, "meaning": 2}, {"formality": 1, "fluency": 3},
                {"formality": 1, "fluency": 3, "meaning": 2, "extra": 1}, {"formality": 1.5, "fluency": 3,
                                                                          "meaning": 2}, "S1"):
        r = p.answer(item["id"], bad)
        assert r.status_code == 400, bad
    r = p.answer(item["id"], {"formality": -3, "fluency": 5, "meaning": 6})
    assert r.status_code == 201
    rows = {r.question: r.value for r in Response.objects.all()}
    assert rows == {"formality": -3.0, "fluency": 5.0, "meaning": 6.0}
    assert p.answer(item["id"], {"formality": -3, "fluency": 5, "meaning": 6}).status_code == 200
    assert p.answer(item["id"], {"formality": -2, "fluency": 5, "meaning": 6}).status_code == 409


def test_likert_mind_the_style_gap_labels():
    p, client, body = _session("likert", questions=QUESTION_PRESETS["mind-the-style-gap"])
    q = body["study"]["questions"][0]
    assert q["labels"]["1"] == "Very poor" and q["labels"]["5"] == "Very good"


def test_ranking_is_a_permutation_best_first():
    p, client, _ = _session("ranking")
    item = p.next().json()["item"]
    assert sorted(o["id"] for o in item["outputs"]) == ["o1", "o2", "o3"]
    assert all(set(o) == {"id", "text"} for o in item["outputs"])
    for bad in (["o1", "o2"], ["o1", "o1", "o2"], ["o1", "o2", "o4"], "o1"):
        assert p.answer(item["id"], bad).status_code == 400, bad
    assert p.answer(item["id"], ["o2", "o3", "o1"]).status_code == 201
    assert json.loads(Response.objects.get().answer) == ["o2", "o3", "o1"]


def test_rewrite_needs_minimum_length():
    p, client, _ = _session("rewrite", rewrite_min_length=12)
    item = p.next().json()["item"]
    assert item["min_length"] == 12 and set(item["texts"]) == {"source", "target_style"}
    assert p.answer(item["id"], "   too short   ").status_code == 400
    assert p.answer(item["id"], 42).status_code == 400
    assert p.answer(item["id"], "  I shall be late today.  ").status_code == 201
    assert Response.objects.get().answer == "I shall be late today."


def test_non_ordering_studies_get_no_screening_questions():
    from tests.factories import ScreeningQuestionFactory

    ScreeningQuestionFactory.create_batch(3)
    p, client, _ = _session("rewrite")
    assert p.next().json()["progress"]["total"] == 2
