"""Corpus import: parse a source in one of the supported formats and store it atomically."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from core.errors import ApplicationError
from tasks.models import Corpus, ParallelPair, StyleComponent

BULK_BATCH = 5000


@dataclass
class PairRow:
    """One parsed pair: `text_1` in the component's style 1, `text_2` in style 2."""

    source_id: str
    text_1: str
    text_2: str
    metadata: dict[str, Any] = field(default_factory=dict)


def component_get(*, name: str) -> StyleComponent:
    try:
        return StyleComponent.objects.get(name=name)
    except StyleComponent.DoesNotExist:
        known = ", ".join(StyleComponent.objects.values_list("name", flat=True))
        raise ApplicationError(f"unknown style component '{name}' (known: {known})", code="unknown_component") from None


@transaction.atomic
def corpus_store(
    *,
    name: str,
    component: StyleComponent,
    import_format: str,
    pairs: Sequence[PairRow],
    source: str = "",
    licence: str = "",
    params: dict[str, Any] | None = None,
    n_rows_read: int | None = None,
    n_skipped: int = 0,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Create corpus `name` with `pairs` in one transaction; refuse an existing name unless `replace`."""
    if not name.strip():
        raise ApplicationError("corpus name must not be empty", code="invalid_name")
    existing = Corpus.objects.select_for_update().filter(name=name).first()
    if existing is not None:
        if not replace:
            raise ApplicationError(
                f"corpus '{name}' exists already; pass --replace to overwrite it", code="corpus_exists", status=409
            )
        existing.delete()
    seen: dict[str, int] = {}
    for index, pair in enumerate(pairs):
        if not pair.text_1.strip() or not pair.text_2.strip():
            raise ApplicationError(f"pair {pair.source_id!r} has an empty text", code="empty_text")
        if pair.source_id in seen:
            raise ApplicationError(
                f"duplicate id {pair.source_id!r} (pairs {seen[pair.source_id] + 1} and {index + 1})",
                code="duplicate_id",
            )
        seen[pair.source_id] = index
    corpus = Corpus.objects.create(
        name=name, component=component, import_format=import_format, source=source, licence=licence,
        import_params=params or {}, n_pairs=len(pairs),
        n_rows_read=len(pairs) + n_skipped if n_rows_read is None else n_rows_read, n_skipped=n_skipped,
    )
    total = len(pairs)
    for start in range(0, total, BULK_BATCH):
        chunk = pairs[start:start + BULK_BATCH]
        ParallelPair.objects.bulk_create(
            [
                ParallelPair(corpus=corpus, position=start + offset, source_id=p.source_id, text_1=p.text_1,
                             text_2=p.text_2, metadata=p.metadata)
                for offset, p in enumerate(chunk)
            ],
            batch_size=BULK_BATCH,
        )
        if progress:
            progress(min(start + BULK_BATCH, total), total)
    return corpus
