"""STEL-Or-Content instances built from imported STEL quadruples (STEL's published contraction instances)."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tasks.models import Order, Setup, TaskInstance
from tasks.services.generation import instances_generate
from tasks.services.imports import corpus_import

pytestmark = pytest.mark.django_db


def test_or_content_from_imported_stel_quadruples(shared_data: Path) -> None:
    corpus, _ = corpus_import(name="stel-c", component=None, import_format="stel",
                              paths=[shared_data / "stel" / "quad_questions_char_contraction.tsv"])
    out = StringIO()
    call_command("generate_instances", "--corpus", "stel-c", "--setup", "style-or-content", "--seed", "4", stdout=out,
                 stderr=StringIO())
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["instances"] == 100
    assert 30 < summary["by_label"]["S1-S2"] < 70  # the order of the two sentences is drawn
    sources = {i.pk: i for i in TaskInstance.objects.filter(corpus=corpus, setup=Setup.QUADRUPLE)}
    for inst in TaskInstance.objects.filter(corpus=corpus, setup=Setup.STYLE_OR_CONTENT):
        source = sources[inst.metadata["from_instance"]]
        same_style = source.sentence_1 if source.correct_order == Order.S1_S2 else source.sentence_2
        correct, other = ((inst.sentence_1, inst.sentence_2) if inst.correct_order == Order.S1_S2
                          else (inst.sentence_2, inst.sentence_1))
        # anchor A1; the correct sentence has A1's style and other content, the wrong one is A1's own paraphrase
        assert inst.anchor_1 == source.anchor_1 and correct == same_style and other == source.anchor_2
        assert inst.anchor_2 == "" and inst.family == source.family and inst.stel_id.startswith("SC_")
        styles = {1: inst.sentence_1_style, 2: inst.sentence_2_style}
        assert styles[1 if inst.correct_order == Order.S1_S2 else 2] == inst.anchor_1_style
    # seeded: the same seed gives the same orders
    before = list(TaskInstance.objects.filter(corpus=corpus, setup=Setup.STYLE_OR_CONTENT).order_by("position")
                  .values_list("stel_id", "correct_order"))
    instances_generate(corpus=corpus, setup=Setup.STYLE_OR_CONTENT, seed=4, replace=True)
    after = list(TaskInstance.objects.filter(corpus=corpus, setup=Setup.STYLE_OR_CONTENT).order_by("position")
                 .values_list("stel_id", "correct_order"))
    assert before == after
    with pytest.raises(CommandError, match="only style-or-content"):
        call_command("generate_instances", "--corpus", "stel-c", "--setup", "triple", stdout=StringIO())
