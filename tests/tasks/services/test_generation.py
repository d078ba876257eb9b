"""Generation invariants (STEL §4.1) as property tests, and the stored path on PostgreSQL."""
from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ApplicationError
from tasks.models import Corpus, GenerationRun, Order, ParallelPair, Setup, StyleComponent, TaskInstance
from tasks.services.generation import _instances, draws_make, instances_generate
from tests.factories import CorpusFactory, ParallelPairFactory


def memory_corpus(n: int) -> tuple[Corpus, GenerationRun, list[tuple]]:
    """An unsaved corpus with n pairs whose texts say which pair and style they are."""
    component = StyleComponent(pk=1, name="formality", label_1="informal", label_2="formal")
    corpus = Corpus(pk=1, name="c", component=component)
    pairs = [(100 + i, f"p{i}", {1: f"informal {i}", 2: f"formal {i}"}) for i in range(n)]
    return corpus, GenerationRun(pk=1, corpus=corpus, setup="quadruple", seed=0), pairs


def pair_and_style(text: str) -> tuple[int, int]:
    style, index = text.split(" ")
    return int(index), 1 if style == "informal" else 2


settings_fast = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings_fast
@given(n=st.integers(2, 60), seed=st.integers(0, 2**32 - 1), setup=st.sampled_from(Setup.values),
       use_count=st.booleans(), data=st.data())
def test_generation_invariants(n: int, seed: int, setup: str, use_count: bool, data: st.DataObject) -> None:
    count = data.draw(st.integers(1, n)) if use_count else None
    corpus, run, pairs = memory_corpus(n)
    instances = _instances(corpus, run, setup, pairs, draws_make(n_pairs=n, seed=seed, count=count))
    anchors = [i.anchor_pair_id for i in instances]
    # each pair anchors exactly one instance (all of them without --count)
    assert len(anchors) == len(set(anchors)) == (count or n)
    assert len({i.stel_id for i in instances}) == len(instances)
    for instance in instances:
        a_index, a1_style = pair_and_style(instance.anchor_1)
        assert instance.anchor_pair_id == 100 + a_index and a1_style == instance.anchor_1_style
        assert instance.sentence_pair_id != instance.anchor_pair_id
        s1_index, s1_style = pair_and_style(instance.sentence_1)
        s2_index, s2_style = pair_and_style(instance.sentence_2)
        assert (s1_style, s2_style) == (instance.sentence_1_style, instance.sentence_2_style)
        assert s1_style != s2_style
        if setup == Setup.STYLE_OR_CONTENT:
            # one sentence is A1's own paraphrase in the other style, the other is another pair in A1's style;
            # the same-style one is correct
            same = instance.sentence_1 if instance.correct_order == Order.S1_S2 else instance.sentence_2
            paraphrase = instance.sentence_2 if instance.correct_order == Order.S1_S2 else instance.sentence_1
            assert pair_and_style(same)[1] == a1_style and pair_and_style(same)[0] != a_index
            assert pair_and_style(paraphrase) == (a_index, 3 - a1_style)
        else:
            assert s1_index == s2_index != a_index
            # the label: S1-S2 exactly when A1 and S1 share a style
            assert (instance.correct_order == Order.S1_S2) == (a1_style == s1_style)
        if setup == Setup.QUADRUPLE:
            assert pair_and_style(instance.anchor_2) == (a_index, 3 - a1_style) == (a_index, instance.anchor_2_style)
        else:
            assert instance.anchor_2 == "" and instance.anchor_2_style is None


@settings_fast
@given(n=st.integers(2, 40), seed=st.integers(0, 2**32 - 1))
def test_triple_and_quadruple_share_the_same_draws(n: int, seed: int) -> None:
    corpus, run, pairs = memory_corpus(n)
    quads = _instances(corpus, run, Setup.QUADRUPLE, pairs, draws_make(n_pairs=n, seed=seed, count=None))
    triples = _instances(corpus, run, Setup.TRIPLE, pairs, draws_make(n_pairs=n, seed=seed, count=None))
    for quad, triple in zip(quads, triples, strict=True):
        assert (quad.anchor_1, quad.sentence_1, quad.sentence_2, quad.correct_order, quad.family) == (
            triple.anchor_1, triple.sentence_1, triple.sentence_2, triple.correct_order, triple.family)
        assert quad.stel_id.startswith("QQ_") and triple.stel_id.startswith("QT_")


@settings_fast
@given(n=st.integers(2, 40), seed=st.integers(0, 2**32 - 1))
def test_same_seed_same_draws_other_seed_differs_on_large_corpora(n: int, seed: int) -> None:
    one, two = draws_make(n_pairs=n, seed=seed, count=None), draws_make(n_pairs=n, seed=seed, count=None)
    for field in ("anchors", "others", "anchor_1_style", "sentence_1_style"):
        assert getattr(one, field).tolist() == getattr(two, field).tolist()


def test_labels_are_balanced_and_seed_matters() -> None:
    one = draws_make(n_pairs=5000, seed=1, count=None)
    other = draws_make(n_pairs=5000, seed=2, count=None)
    assert one.others.tolist() != other.others.tolist()
    same_style = (one.anchor_1_style == one.sentence_1_style).mean()
    assert 0.45 < same_style < 0.55


def test_too_few_pairs_and_bad_count() -> None:
    with pytest.raises(ApplicationError, match="at least 2 pairs"):
        draws_make(n_pairs=1, seed=0, count=None)
    with pytest.raises(ApplicationError, match="between 1 and the number of pairs \\(5\\)"):
        draws_make(n_pairs=5, seed=0, count=6)


# --- stored on PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture
def corpus(db) -> Corpus:
    corpus = CorpusFactory(name="demo")
    for i in range(30):
        ParallelPairFactory(corpus=corpus, position=i, source_id=str(i), text_1=f"hey {i} lol", text_2=f"Hello, {i}.")
    return corpus


def _rows(run: GenerationRun) -> list[tuple]:
    return list(run.instances.order_by("position").values_list(
        "stel_id", "anchor_1", "anchor_2", "sentence_1", "sentence_2", "correct_order", "family"))


@pytest.mark.django_db
def test_generate_command_stores_every_setup_deterministically(corpus: Corpus) -> None:
    out = StringIO()
    call_command("generate_instances", "--corpus", "demo", "--setup", "quadruple", "--seed", "5", stdout=out)
    summary = json.loads(out.getvalue().splitlines()[-1])
    assert summary["ok"] and summary["instances"] == 30 and summary["seed"] == 5
    assert sum(summary["by_label"].values()) == 30
    run = GenerationRun.objects.get(pk=summary["generation_run_id"])
    first = _rows(run)
    assert set(TaskInstance.objects.values_list("anchor_pair__position", flat=True)) == set(range(30))
    # refusing to generate twice, replacing reproduces the same rows from the same seed
    with pytest.raises(CommandError, match="has quadruple instances already"):
        call_command("generate_instances", "--corpus", "demo", "--setup", "quadruple", stdout=StringIO())
    again = instances_generate(corpus=corpus, setup="quadruple", seed=5, replace=True)
    assert _rows(again) == first
    other = instances_generate(corpus=corpus, setup="quadruple", seed=6, replace=True)
    assert _rows(other) != first
    triple = instances_generate(corpus=corpus, setup="triple", seed=6)
    quad_rows, triple_rows = _rows(other), _rows(triple)
    assert [(r[1], r[3], r[4], r[5], r[6]) for r in quad_rows] == [(r[1], r[3], r[4], r[5], r[6]) for r in triple_rows]
    assert TaskInstance.objects.filter(setup="quadruple").count() == 30
    sample = instances_generate(corpus=corpus, setup="style-or-content", seed=1, count=10)
    assert sample.n_instances == 10 and sample.instances.count() == 10


@pytest.mark.django_db
def test_generate_unknown_corpus_is_a_clean_error() -> None:
    out = StringIO()
    with pytest.raises(CommandError, match="no corpus named 'nope'"):
        call_command("generate_instances", "--corpus", "nope", "--setup", "triple", stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1])["ok"] is False


@pytest.mark.django_db
def test_generation_on_the_real_turkcorpus(shared_data) -> None:
    from tasks.services.imports import corpus_import

    corpus, summary = corpus_import(name="turk", component="simplicity", import_format="turkcorpus",
                                    paths=[shared_data / "turkcorpus" / "test.8turkers.organized.tsv"], seed=1)
    run = instances_generate(corpus=corpus, setup="quadruple", seed=1)
    assert run.n_instances == summary["pairs"] == ParallelPair.objects.filter(corpus=corpus).count()
    instance = run.instances.select_related("anchor_pair", "sentence_pair").first()
    texts = {1: instance.anchor_pair.text_1, 2: instance.anchor_pair.text_2}
    assert instance.anchor_1 == texts[instance.anchor_1_style] and instance.anchor_2 == texts[instance.anchor_2_style]
    # STEL's IDs: the complex row (c-85) and the turker of the simplification (s-t5), e.g. QQ_c-85-s-t5-85_…
    for stel_id, anchor_id, other_id in run.instances.values_list("stel_id", "anchor_pair__source_id",
                                                                  "sentence_pair__source_id"):
        match = re.fullmatch(r"QQ_(c|s-t[0-7])-(\d+)-(c|s-t[0-7])-(\d+)_(c|s-t[0-7])-(\d+)-(c|s-t[0-7])-(\d+)", stel_id)
        assert match and match[2] == match[4] == anchor_id and match[6] == match[8] == other_id, stel_id
        assert {match[1][0], match[3][0]} == {match[5][0], match[7][0]} == {"c", "s"}


@pytest.mark.django_db
def test_generation_screens_anchor_and_alternative_pairs_with_the_pair_test() -> None:
    component = StyleComponent.objects.get(name="formality")
    corpus = CorpusFactory(name="screened", component=component, import_params={})
    for i in range(12):
        ParallelPairFactory(corpus=corpus, position=i, source_id=str(i), text_1=f"hey {i} lol whatever",
                            text_2=f"Hello, number {i}.")
    # identical, a substring, and two edits apart: STEL would use none of them, as anchor or as alternative
    bad = [("same text here", "same text here"), ("Hello there", "Hello there, friend."), ("colour me", "color me!")]
    for offset, (text_1, text_2) in enumerate(bad, start=12):
        ParallelPairFactory(corpus=corpus, position=offset, source_id=str(offset), text_1=text_1, text_2=text_2)
    run = instances_generate(corpus=corpus, setup=Setup.QUADRUPLE, seed=4)
    assert run.n_instances == 12 and run.params["n_pairs_stored"] == 15 and run.params["min_edit_distance"] == 4
    assert run.params["pair_test_failed"] == {"empty": 0, "identical": 1, "too_similar": 1, "substring": 1,
                                              "artefact_only": 0}
    used = set(run.instances.values_list("anchor_pair__source_id", flat=True)) | set(
        run.instances.values_list("sentence_pair__source_id", flat=True))
    assert used == {str(i) for i in range(12)}
