"""STEL §4.1 instance generation, vectorized: every pair of the corpus anchors exactly one instance.

The random draws happen in one fixed sequence that does not depend on the setup, so the triple, quadruple and
style-or-content instances generated with the same corpus, seed and count come from the very same draws (and
share `family`), and can be compared across setups later.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from core.errors import ApplicationError
from tasks.error_codes import CONFLICT, INSTANCES_EXIST, INSTANCES_IN_USE, INVALID_COUNT, TOO_FEW_PAIRS, UNKNOWN_SETUP
from tasks.models import Corpus, GenerationRun, Order, ParallelPair, Setup, StyleComponent, TaskInstance
from tasks.services.pair_test import PAIR_TEST_REASONS, STEL_MIN_EDIT_DISTANCE, pair_test
from tasks.services.stel_or_content import style_or_content_from_stel

GENERATION_VERSION = 2  # 2: STEL's pair test screens anchor and alternative pairs; STEL-style ID tags
INSERT_BATCH = 5000
ID_PREFIX = {Setup.QUADRUPLE: "QQ", Setup.TRIPLE: "QT", Setup.STYLE_OR_CONTENT: "SC"}


@dataclass(frozen=True)
class Draws:
    """Per generated instance: anchor pair index, sentence pair index, style of A1 and style of S1 (1 or 2)."""

    anchors: np.ndarray
    others: np.ndarray
    anchor_1_style: np.ndarray
    sentence_1_style: np.ndarray


def draws_make(*, n_pairs: int, seed: int, count: int | None) -> Draws:
    """The random part of generation, independent of the setup."""
    if n_pairs < 2:
        raise ApplicationError(f"a corpus needs at least 2 pairs to generate instances; it has {n_pairs}",
                               code=TOO_FEW_PAIRS)
    if count is not None and not 1 <= count <= n_pairs:
        raise ApplicationError(f"Count must be between 1 and the number of pairs ({n_pairs}); got {count}",
                               code=INVALID_COUNT, field="count")
    rng = np.random.default_rng(seed)
    if count is None:
        anchors = np.arange(n_pairs)
    else:
        anchors = np.sort(rng.choice(n_pairs, size=count, replace=False))
    # A different pair, uniformly: draw from n-1 values and skip over the anchor itself.
    others = rng.integers(0, n_pairs - 1, size=anchors.size)
    others = others + (others >= anchors)
    anchor_1_style = rng.integers(1, 3, size=anchors.size)
    sentence_1_style = rng.integers(1, 3, size=anchors.size)
    return Draws(anchors, others, anchor_1_style, sentence_1_style)


def pairs_usable(
    pairs: list[tuple], *, min_edit_distance: int
) -> tuple[list[tuple], dict[str, int]]:
    """The pairs that pass STEL's pair test, and how many failed by reason. STEL tests the anchor pair and
    the alternative pair alike; a pair that fails is neither."""
    usable, failed = [], dict.fromkeys(PAIR_TEST_REASONS, 0)
    for pair in pairs:
        reason = pair_test(pair[2][1], pair[2][2], min_edit_distance=min_edit_distance)
        if reason is None:
            usable.append(pair)
        else:
            failed[reason] += 1
    return usable, failed


def _min_edit_distance(corpus: Corpus) -> int:
    recorded = corpus.import_params.get("min_edit_distance")
    if recorded is not None:
        return int(recorded)
    return STEL_MIN_EDIT_DISTANCE if corpus.component.kind == StyleComponent.Kind.DIMENSION else 0


def _instances(corpus: Corpus, run: GenerationRun, setup: str, pairs: list[tuple], draws: Draws) -> list[TaskInstance]:
    labels = {1: corpus.component.label_1, 2: corpus.component.label_2}
    prefix = ID_PREFIX[Setup(setup)]

    def tag(pair: tuple, style: int) -> str:
        """The style's name in IDs: the pair's own tag where the import set one (TurkCorpus: `c`, `s-t5`)."""
        tags = (pair[3] if len(pair) > 3 else None) or {}
        return tags.get(str(style)) or labels[style]

    instances = []
    for position, (a, o, a1, s1) in enumerate(zip(draws.anchors.tolist(), draws.others.tolist(),
                                                  draws.anchor_1_style.tolist(), draws.sentence_1_style.tolist(),
                                                  strict=True)):
        anchor, other = pairs[a], pairs[o]
        (a_id, a_src, a_texts), (o_id, o_src, o_texts) = anchor[:3], other[:3]
        a2, s2 = 3 - a1, 3 - s1
        fields: dict[str, Any] = {"anchor_1": a_texts[a1], "anchor_1_style": a1, "sentence_1_style": s1,
                                  "sentence_2_style": s2, "sentence_pair_id": o_id}
        if setup == Setup.STYLE_OR_CONTENT:
            # S1/S2 are A1's own paraphrase (other style, same content) and a sentence of the other pair in A1's
            # style; the same-style sentence is correct. S1 has style s1 in both cases, as in the other setups.
            same_style, paraphrase = o_texts[a1], a_texts[a2]
            first, second = (same_style, paraphrase) if s1 == a1 else (paraphrase, same_style)
            (p1, s1_src), (p2, s2_src) = ((other, o_src), (anchor, a_src)) if s1 == a1 else ((anchor, a_src),
                                                                                             (other, o_src))
            fields.update(sentence_1=first, sentence_2=second)
            stel_id = f"{prefix}_{tag(anchor, a1)}-{a_src}_{tag(p1, s1)}-{s1_src}-{tag(p2, s2)}-{s2_src}"
        else:
            fields.update(sentence_1=o_texts[s1], sentence_2=o_texts[s2])
            if setup == Setup.QUADRUPLE:
                fields.update(anchor_2=a_texts[a2], anchor_2_style=a2)
                stel_id = (f"{prefix}_{tag(anchor, a1)}-{a_src}-{tag(anchor, a2)}-{a_src}_"
                           f"{tag(other, s1)}-{o_src}-{tag(other, s2)}-{o_src}")
            else:
                stel_id = f"{prefix}_{tag(anchor, a1)}-{a_src}_{tag(other, s1)}-{o_src}-{tag(other, s2)}-{o_src}"
        instances.append(TaskInstance(
            stel_id=stel_id, setup=setup, component_id=corpus.component_id, corpus_id=corpus.pk, generation_run=run,
            position=position, anchor_pair_id=a_id, family=f"{corpus.pk}:{a_src}:{o_src}:{a1}{s1}",
            correct_order=Order.S1_S2 if a1 == s1 else Order.S2_S1, **fields,
        ))
    return instances


def _from_stel(*, corpus: Corpus, setup: str, seed: int, count: int | None,
               progress: Callable[[int, int], None] | None) -> GenerationRun:
    """An imported STEL corpus has instances, not pairs: style-or-content ones can be built from its quadruples."""

    if setup != Setup.STYLE_OR_CONTENT:
        raise ApplicationError(f"corpus '{corpus.name}' holds imported STEL instances, not pairs: only "
                               f"style-or-content instances can be generated from it", code=TOO_FEW_PAIRS)
    run = GenerationRun.objects.create(corpus=corpus, setup=setup, seed=seed, count=count,
                                       params={"version": GENERATION_VERSION, "rng": "numpy.default_rng",
                                               "from": "imported STEL quadruples"})
    run.n_instances = style_or_content_from_stel(corpus=corpus, run=run, seed=seed, count=count, progress=progress)
    run.save(update_fields=["n_instances"])
    return run


def instances_generate(
    *,
    corpus: Corpus,
    setup: str,
    seed: int = 0,
    count: int | None = None,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> GenerationRun:
    """Generate `setup` instances for `corpus` (STEL §4.1) and store them with one bulk insert per batch."""
    if setup not in Setup.values:
        raise ApplicationError(f"unknown setup {setup!r} (one of: {', '.join(Setup.values)})", code=UNKNOWN_SETUP)
    with transaction.atomic():
        Corpus.objects.select_for_update().filter(pk=corpus.pk).first()
        previous = TaskInstance.objects.filter(corpus=corpus, setup=setup)
        if previous.exists():
            if not replace:
                raise ApplicationError(
                    f"corpus '{corpus.name}' has {setup} instances already; choose Replace to generate them anew",
                    code=INSTANCES_EXIST, status=409, field="replace",
                )
            try:
                GenerationRun.objects.filter(corpus=corpus, setup=setup).delete()
                previous.delete()
            except ProtectedError:
                raise ApplicationError(
                    f"corpus '{corpus.name}' has {setup} instances used in a study; they cannot be replaced",
                    code=INSTANCES_IN_USE, status=409,
                ) from None
        if corpus.import_format == Corpus.Format.STEL:
            return _from_stel(corpus=corpus, setup=setup, seed=seed, count=count, progress=progress)
        rows = ParallelPair.objects.filter(corpus=corpus).order_by("position").values_list(
            "id", "source_id", "text_1", "text_2", "metadata__style_tags"
        )
        stored = [(pk, source_id, {1: text_1, 2: text_2}, tags) for pk, source_id, text_1, text_2, tags
                  in rows.iterator(5000)]
        min_edit_distance = _min_edit_distance(corpus)
        pairs, failed = pairs_usable(stored, min_edit_distance=min_edit_distance)
        draws = draws_make(n_pairs=len(pairs), seed=seed, count=count)
        run = GenerationRun.objects.create(
            corpus=corpus, setup=setup, seed=seed, count=count,
            params={"version": GENERATION_VERSION, "rng": "numpy.default_rng", "n_pairs": len(pairs),
                    "n_pairs_stored": len(stored), "min_edit_distance": min_edit_distance, "pair_test_failed": failed},
        )
        instances = _instances(corpus, run, setup, pairs, draws)
        total = len(instances)
        try:
            for start in range(0, total, INSERT_BATCH):
                TaskInstance.objects.bulk_create(instances[start:start + INSERT_BATCH])
                if progress:
                    progress(min(start + INSERT_BATCH, total), total)
        except IntegrityError as exc:  # e.g. an imported STEL instance with the same ID in this corpus
            raise ApplicationError(f"could not store instances: {exc}", code=CONFLICT, status=409) from None
        run.n_instances = total
        run.save(update_fields=["n_instances"])
    return run
