"""tasks' eraser (tasks/services/erasure.py): pairs built from the person's rewrites go, instances made from them
are withdrawn; pairs of other writers stay."""
from __future__ import annotations

import datetime as dt

import pytest

from core.erasure import ErasureTarget
from tasks.models import InstanceStatus, ParallelPair
from tasks.services.erasure import WITHDRAWN_TEXT, writer_pairs_erase
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_pairs_of_the_writer_go_and_their_instances_are_withdrawn():
    corpus = f.CorpusFactory()
    mine = ParallelPair.objects.create(corpus=corpus, position=0, source_id="a#1", text_1="x", text_2="my rewrite",
                                       metadata={"writer_2": {"participant": "W1", "platform": "mturk"},
                                                 "writer_1": {"participant": "W2", "platform": "mturk"}})
    theirs = ParallelPair.objects.create(corpus=corpus, position=1, source_id="a#2", text_1="y", text_2="z",
                                         metadata={"writer": {"participant": "W1", "platform": "prolific"}})
    instance = f.TaskInstanceFactory(corpus=corpus, anchor_pair=mine, anchor_2="my rewrite", status="validated")
    target = ErasureTarget(platform="mturk", external_id="W1", person_key="ps-" + "0" * 20,
                           now=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    part = writer_pairs_erase(target)
    assert part.counts == {"tasks.ParallelPair": 1, "tasks.TaskInstance (withdrawn)": 1}
    assert list(ParallelPair.objects.all()) == [theirs]  # same id on another platform is another person
    instance.refresh_from_db()
    assert instance.status == InstanceStatus.WITHDRAWN and instance.anchor_pair is None
    assert instance.anchor_2 == WITHDRAWN_TEXT and instance.metadata["withdrawn"]["at"].startswith("2026-01-01")
