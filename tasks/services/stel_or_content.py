"""STEL-Or-Content instances from imported STEL quadruples (STEL §6: does a method pick style over content?).

An imported quadruple (A1, A2, S1, S2) already holds what an or-content triple needs: A2 is A1's paraphrase in the
other style (same content), and one of S1/S2 is written in A1's style with other content. The or-content triple
keeps A1 as anchor and offers the same-style sentence and the paraphrase; the same-style sentence is correct. Their
order is drawn with the seeded RNG, as in `generation.draws_make`.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from django.db import IntegrityError, transaction

from core.errors import ApplicationError
from tasks.error_codes import CONFLICT, INVALID_COUNT, TOO_FEW_PAIRS
from tasks.models import Corpus, GenerationRun, Order, Setup, TaskInstance

INSERT_BATCH = 5000


def style_or_content_from_stel(
    *, corpus: Corpus, run: GenerationRun, seed: int, count: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Store one style-or-content instance per imported quadruple of `corpus` under `run`; returns how many."""
    sources = list(TaskInstance.objects.filter(corpus=corpus, setup=Setup.QUADRUPLE, generation_run__isnull=True)
                   .order_by("position"))
    if not sources:
        raise ApplicationError(f"corpus '{corpus.name}' has no imported quadruples to build style-or-content "
                               "instances from (triples lack the paraphrase A2)", code=TOO_FEW_PAIRS)
    if count is not None and not 1 <= count <= len(sources):
        raise ApplicationError(f"Count must be between 1 and the number of quadruples ({len(sources)}); got {count}",
                               code=INVALID_COUNT, field="count")
    rng = np.random.default_rng(seed)
    chosen = np.arange(len(sources)) if count is None else np.sort(rng.choice(len(sources), size=count,
                                                                              replace=False))
    same_style_first = rng.integers(0, 2, size=len(chosen)).astype(bool)
    instances = []
    for position, (index, first) in enumerate(zip(chosen.tolist(), same_style_first.tolist(), strict=True)):
        source = sources[index]
        a1 = source.anchor_1_style
        # The sentence that goes with A1 (same style) and its style; the correct order names it.
        same = source.sentence_1 if source.correct_order == Order.S1_S2 else source.sentence_2
        paraphrase = source.anchor_2
        s1_text, s2_text = (same, paraphrase) if first else (paraphrase, same)
        s1_style = a1 if first else 3 - a1
        instances.append(TaskInstance(
            stel_id=f"SC{source.stel_id[2:] if source.stel_id.startswith('QQ') else '_' + source.stel_id}",
            setup=Setup.STYLE_OR_CONTENT, component_id=source.component_id, corpus_id=corpus.pk, generation_run=run,
            position=position, family=source.family, anchor_1=source.anchor_1, anchor_1_style=a1,
            sentence_1=s1_text, sentence_2=s2_text, sentence_1_style=s1_style, sentence_2_style=3 - s1_style,
            correct_order=Order.S1_S2 if first else Order.S2_S1,
            metadata={"from_instance": source.pk, "from_stel_id": source.stel_id},
        ))
    try:
        with transaction.atomic():
            for start in range(0, len(instances), INSERT_BATCH):
                TaskInstance.objects.bulk_create(instances[start:start + INSERT_BATCH])
                if progress:
                    progress(min(start + INSERT_BATCH, len(instances)), len(instances))
    except IntegrityError as exc:
        raise ApplicationError(f"could not store instances: {exc}", code=CONFLICT, status=409) from None
    return len(instances)
