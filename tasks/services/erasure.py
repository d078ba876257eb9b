"""Erasure on request, the tasks app's tables: corpus pairs built from the person's rewrites (their metadata names
the writer: `writer`, or `writer_1`/`writer_2` for pairs of two rewrites) are deleted, and the task instances
generated from those pairs are withdrawn, not silently kept: their status becomes `withdrawn` (never served, filtered,
exported or counted again; annotation closes their study items), `metadata.withdrawn` says why and when, they are
detached from the pair and the rewrite's text is replaced, so a benchmark built earlier can tell which of its
instances are gone.
Registered with core's erasure (core/erasure.py) by TasksConfig.ready().
"""
from __future__ import annotations

from django.db.models import Q

from core.erasure import ErasurePart, ErasureTarget
from tasks.models import InstanceStatus, ParallelPair, TaskInstance

WITHDRAWN_TEXT = "[withdrawn: the writer's data was erased on request]"
WRITER_KEYS = ("writer", "writer_1", "writer_2")


def _writer_q(target: ErasureTarget) -> Q:
    query = Q()
    for key in WRITER_KEYS:
        query |= Q(**{f"metadata__{key}__participant": target.external_id,
                      f"metadata__{key}__platform": target.platform})
    return query


def writer_pairs_erase(target: ErasureTarget) -> ErasurePart:
    pairs = list(ParallelPair.objects.filter(_writer_q(target)))
    part = ErasurePart()
    if not pairs:
        return part
    pair_ids = [pair.pk for pair in pairs]
    texts = {text for pair in pairs for text in (pair.text_1, pair.text_2)}
    instances = list(TaskInstance.objects.filter(Q(anchor_pair_id__in=pair_ids) | Q(sentence_pair_id__in=pair_ids)))
    for instance in instances:
        for name in ("anchor_1", "anchor_2", "sentence_1", "sentence_2"):
            if getattr(instance, name) in texts:
                setattr(instance, name, WITHDRAWN_TEXT)
        if instance.anchor_pair_id in pair_ids:
            instance.anchor_pair = None
        if instance.sentence_pair_id in pair_ids:
            instance.sentence_pair = None
        instance.status = InstanceStatus.WITHDRAWN
        instance.metadata = {**(instance.metadata or {}), "withdrawn": {
            "reason": "built from a rewrite whose writer asked for erasure", "at": target.now.isoformat()}}
        instance.save(update_fields=["anchor_1", "anchor_2", "sentence_1", "sentence_2", "anchor_pair",
                                     "sentence_pair", "status", "metadata"])
    ParallelPair.objects.filter(pk__in=pair_ids).delete()
    part.counts = {"tasks.ParallelPair": len(pair_ids), "tasks.TaskInstance (withdrawn)": len(instances)}
    return part
