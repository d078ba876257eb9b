"""Corpus import: parse a source in one of the supported formats and store it atomically."""
from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.db import transaction

from core.errors import ApplicationError
from tasks.error_codes import (
    COMPONENT_MISMATCH,
    CORPUS_EXISTS,
    DUPLICATE_ID,
    EMPTY_FILE,
    EMPTY_TEXT,
    INVALID_LANGUAGE,
    INVALID_NAME,
    INVALID_VALUE,
    MISSING_COMPONENT,
    MIXED_COMPONENTS,
    NO_FILES,
    UNKNOWN_COMPONENT,
    UNKNOWN_NORMALIZER,
)
from tasks.licences import (
    GYAFC,
    GYAFC_ATTRIBUTION,
    STEL_ATTRIBUTION,
    STEL_LICENCE,
    licence_resolve,
)
from tasks.models import Corpus, Order, ParallelPair, Setup, StyleComponent, TaskInstance
from tasks.services.components import ComponentSpec, component_build, component_save, labels_from_stel_ids
from tasks.services.corpus_formats import FORMATS, corpus_format_get
from tasks.services.normalization import NORMALIZERS
from tasks.services.pair_test import PAIR_TEST_REASONS, STEL_MIN_EDIT_DISTANCE
from tasks.services.parsers import (  # noqa: F401 - PairRow and read_text are imported from here by builders
    STEL_ID_TAGS,
    PairRow,
    StelRow,
    pairs_screen,
    parse_aligned,
    parse_pairs,
    parse_stel,
    parse_turkcorpus,
    read_text,
)

BULK_BATCH = 5000


def component_get(*, name: str) -> StyleComponent:
    try:
        return StyleComponent.objects.get(name=name)
    except StyleComponent.DoesNotExist:
        known = ", ".join(StyleComponent.objects.values_list("name", flat=True))
        raise ApplicationError(f"unknown style component '{name}' (known: {known})", code=UNKNOWN_COMPONENT) from None


@transaction.atomic
def corpus_store(
    *,
    name: str,
    component: StyleComponent,
    import_format: str,
    pairs: Sequence[PairRow],
    source: str = "",
    licence: str = "",
    attribution: str = "",
    language: str = "en",
    params: dict[str, Any] | None = None,
    n_rows_read: int | None = None,
    n_skipped: int = 0,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Create corpus `name` with `pairs` in one transaction; refuse an existing name unless `replace`."""
    licence = licence_resolve(licence)
    if not name.strip():
        raise ApplicationError("corpus name must not be empty", code=INVALID_NAME)
    existing = Corpus.objects.select_for_update().filter(name=name).first()
    if existing is not None:
        if not replace:
            raise ApplicationError(
                f"corpus '{name}' exists already; choose Replace to overwrite it", code=CORPUS_EXISTS, status=409,
                field="replace",
            )
        existing.delete()
    seen: dict[str, int] = {}
    for index, pair in enumerate(pairs):
        if not pair.text_1.strip() or not pair.text_2.strip():
            raise ApplicationError(f"pair {pair.source_id!r} has an empty text", code=EMPTY_TEXT)
        if pair.source_id in seen:
            raise ApplicationError(
                f"duplicate id {pair.source_id!r} (pairs {seen[pair.source_id] + 1} and {index + 1})",
                code=DUPLICATE_ID,
            )
        seen[pair.source_id] = index
    corpus = Corpus.objects.create(
        name=name, component=component, import_format=import_format, source=source, licence=licence,
        attribution=attribution, language=(language or "en").strip(), import_params=params or {}, n_pairs=len(pairs),
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


def corpus_licence_update(*, corpus: Corpus, licence: str | None = None, attribution: str | None = None,
                          language: str | None = None) -> Corpus:
    """Record a corpus's licence (an SPDX identifier, checked), attribution or language; None leaves one as it is."""
    changed = []
    if licence is not None:
        corpus.licence = licence_resolve(licence)
        changed.append("licence")
    if attribution is not None:
        corpus.attribution = attribution
        changed.append("attribution")
    if language is not None:
        if not language.strip():
            raise ApplicationError("Language: give a BCP-47 tag such as en", code=INVALID_LANGUAGE, field="language")
        corpus.language = language.strip()
        changed.append("language")
    if changed:
        corpus.save(update_fields=changed)
    return corpus


def _stel_styles(row: StelRow, component: StyleComponent) -> tuple[int, int, bool]:
    """(style of A1, style of S1, inferred_from_id). STEL's TSV does not say which style a text has; its IDs
    name style tags (QQ_ction-0-wiki-0_wiki-73-ction-73). Unknown tags fall back to A1 = style 1."""
    parts = row.stel_id.split("_")
    if len(parts) >= 3:
        anchor_tag = parts[1].split("-")[0]
        sentence_tag = parts[2].split("-")[0]
        labels = {component.label_1: 1, component.label_2: 2}
        a1 = labels.get(STEL_ID_TAGS.get(anchor_tag, anchor_tag))
        s1 = labels.get(STEL_ID_TAGS.get(sentence_tag, sentence_tag))
        if a1 and s1 and ((a1 == s1) == (row.correct_alternative == 1)):
            return a1, s1, True
    a1 = 1
    s1 = a1 if row.correct_alternative == 1 else 3 - a1
    return a1, s1, False


@transaction.atomic
def corpus_store_stel(
    *, name: str, component: StyleComponent | None, rows: Sequence[StelRow], paths: Sequence[str | Path],
    replace: bool, progress: Callable[[int, int], None] | None = None, params: dict[str, Any] | None = None,
    licence: str = STEL_LICENCE, attribution: str = STEL_ATTRIBUTION, language: str = "en",
) -> Corpus:
    """Store published STEL instances as task instances of a corpus without pairs."""
    style_types = sorted({row.style_type for row in rows})
    if not rows:
        raise ApplicationError(f"{', '.join(map(str, paths))}: no instances found", code=EMPTY_FILE)
    if component is None:
        if len(style_types) != 1:
            raise ApplicationError(
                f"the files mix style types {style_types}; import each style type as its own corpus",
                code=MIXED_COMPONENTS,
            )
        component = component_get(name=style_types[0])
    for row in rows:
        if row.style_type != component.name:
            raise ApplicationError(
                f"line {row.line}: style type {row.style_type!r} differs from the component {component.name!r}",
                code=COMPONENT_MISMATCH, field="component",
            )
    corpus = corpus_store(
        name=name, component=component, import_format=Corpus.Format.STEL, pairs=[],
        source="; ".join(str(p) for p in paths), licence=licence, attribution=attribution, language=language,
        params={"files": [str(p) for p in paths], **(params or {})}, n_rows_read=len(rows), replace=replace,
    )
    instances = []
    for position, row in enumerate(rows):
        a1, s1, inferred = _stel_styles(row, component)
        quadruple = bool(row.anchor_2.strip())
        instances.append(TaskInstance(
            stel_id=row.stel_id, setup=Setup.QUADRUPLE if quadruple else Setup.TRIPLE, component=component,
            corpus=corpus, position=position, family=row.stel_id, anchor_1=row.anchor_1, anchor_2=row.anchor_2,
            sentence_1=row.sentence_1, sentence_2=row.sentence_2, anchor_1_style=a1,
            anchor_2_style=(3 - a1) if quadruple else None, sentence_1_style=s1, sentence_2_style=3 - s1,
            correct_order=Order.S1_S2 if row.correct_alternative == 1 else Order.S2_S1,
            published_votes=row.votes, metadata={"styles_from_id": inferred, "line": row.line},
        ))
    TaskInstance.objects.bulk_create(instances, batch_size=BULK_BATCH)
    if progress:
        progress(len(instances), len(instances))
    corpus.n_instances = len(instances)
    corpus.save(update_fields=["n_instances"])
    return corpus


def default_min_edit_distance(component: StyleComponent) -> int:
    """STEL tested the edit distance of its two dimensions' pairs only (`edit_dist=True` for formality and
    simplicity); contraction and number-substitution pairs differ by a few characters by design."""
    return STEL_MIN_EDIT_DISTANCE if component.kind == StyleComponent.Kind.DIMENSION else 0


# Formats whose texts are tokenized as published, so that they are normalized unless --no-detokenize.
DETOKENIZE_BY_DEFAULT = {name for name in FORMATS if corpus_format_get(name).detokenize}


def corpus_import(
    *,
    name: str,
    component: str | None,
    import_format: str,
    paths: Sequence[str | Path],
    seed: int = 0,
    min_edit_distance: int | None = None,
    detokenize: bool | None = None,
    normalizer: str = "moses",
    create_component: ComponentSpec | None = None,
    replace: bool = False,
    source: str = "",
    licence: str = "",
    attribution: str = "",
    language: str = "en",
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Corpus, dict[str, Any]]:
    """Parse `paths` in `import_format` and store them as corpus `name`; returns the corpus and a summary.

    Texts are normalized (`detokenize`; None = the format's default: on for TurkCorpus) with `normalizer`
    ("moses", by the rules of the corpus's `language`, or "stel" for STEL's own mapping of English), then every
    pair passes STEL's pair test (non-empty, not equal,
    not a substring, edit distance at least `min_edit_distance`; None = STEL's 4 for a dimension, 0 for a
    characteristic, whose pairs differ by a few characters by design); failing pairs are dropped and counted.
    `create_component` creates the component when it does not exist yet (for STEL files: the one style type
    they name), in the transaction that stores the corpus.
    `licence` is an SPDX identifier (tasks.licences; unknown ones are refused before anything is read); without one
    the importers of published corpora record theirs (STEL: MIT, TurkCorpus: GPL-3.0), and files named like GYAFC's
    are recorded under GYAFC's licence, which keeps their text out of exports.
    Nothing is stored when any line is bad: parsing finishes before the one transaction that writes."""
    spec = corpus_format_get(import_format)
    licence, attribution = import_licence(import_format=import_format, paths=paths, licence=licence,
                                          attribution=attribution)
    if not paths:
        raise ApplicationError("no input files given", code=NO_FILES)
    if min_edit_distance is not None and min_edit_distance < 0:
        raise ApplicationError("Min edit distance must be 0 or more", code=INVALID_VALUE, field="min_edit_distance")
    if normalizer not in NORMALIZERS:
        raise ApplicationError(
            f"unknown normalizer {normalizer!r} (one of: {', '.join(NORMALIZERS)})", code=UNKNOWN_NORMALIZER
        )
    if detokenize is None:
        detokenize = import_format in DETOKENIZE_BY_DEFAULT
    normalize = functools.partial(NORMALIZERS[normalizer], language=language) if detokenize else None
    text_params = {"detokenize": detokenize, "normalizer": normalizer if detokenize else None}
    if spec.rows == "instances":
        rows, changed = _stel_rows_normalize(parse_stel(paths), normalize)
        style_types = sorted({row.style_type for row in rows})
        wanted = component or (style_types[0] if len(style_types) == 1 else None)
        comp = _component_resolve(wanted, create_component, [row.stel_id for row in rows]) if wanted else None
        with transaction.atomic():
            if comp is not None and comp.pk is None:
                component_save(component=comp)
            corpus = corpus_store_stel(
                name=name, component=comp, rows=rows, paths=paths, replace=replace, progress=progress,
                params=text_params, licence=licence, attribution=attribution, language=language,
            )
        return corpus, {"corpus": corpus.name, "component": corpus.component.name, "format": import_format,
                        "instances": corpus.n_instances, "pairs": 0, "skipped": 0, "texts_changed": changed,
                        "licence": corpus.licence, **text_params}
    if not component:
        raise ApplicationError("Component is required for this format", code=MISSING_COMPONENT, field="component")
    comp = _component_resolve(component, create_component, [])
    if min_edit_distance is None:
        min_edit_distance = default_min_edit_distance(comp)
    params: dict[str, Any] = {"files": [str(p) for p in paths], "min_edit_distance": min_edit_distance,
                              **text_params}
    if spec.rows == "drawn":
        pairs, stats = parse_turkcorpus(paths, seed=seed, min_edit_distance=min_edit_distance, normalize=normalize)
        params["seed"] = seed
    else:
        parsed, read_stats = spec.parse_pairs(paths)
        pairs, stats = pairs_screen(parsed, min_edit_distance=min_edit_distance, normalize=normalize)
        stats = {"rows_read": len(parsed), **read_stats, **stats}
    skipped = sum(stats[f"skipped_{reason}"] for reason in PAIR_TEST_REASONS)
    params["stats"] = stats
    with transaction.atomic():
        if comp.pk is None:
            component_save(component=comp)
        corpus = corpus_store(
            name=name, component=comp, import_format=import_format, pairs=pairs,
            source=source or "; ".join(str(p) for p in paths), licence=licence, attribution=attribution,
            language=language, params=params, n_rows_read=stats.get("rows_read", len(pairs)), n_skipped=skipped,
            replace=replace, progress=progress,
        )
    return corpus, {"corpus": corpus.name, "component": comp.name, "format": import_format, "pairs": len(pairs),
                    "skipped": skipped, **stats, "rows_read": corpus.n_rows_read, "licence": corpus.licence,
                    "seed": seed if spec.rows == "drawn" else None, **text_params}


# GYAFC's file names (`informal.ref0`, `formal.ref3`, also with a prefix such as `em_`) or a path through a GYAFC
# folder: such a corpus is recorded under GYAFC's licence unless the researcher names another.
GYAFC_PATH = re.compile(r"gyafc|(^|[/_.\-])(in)?formal\.ref[0-3]$", re.IGNORECASE)
KNOWN_LICENCES = {name: corpus_format_get(name).licence for name in FORMATS if corpus_format_get(name).licence}


def import_licence(*, import_format: str, paths: Sequence[str | Path], licence: str, attribution: str
                   ) -> tuple[str, str]:
    """The licence and attribution an import records: the researcher's (checked), else the format's own."""
    licence = licence_resolve(licence)
    if licence:
        return licence, attribution
    if import_format in KNOWN_LICENCES:
        known, credit = KNOWN_LICENCES[import_format]
        return known, attribution or credit
    if any(GYAFC_PATH.search(str(path)) for path in paths):
        return GYAFC, attribution or GYAFC_ATTRIBUTION
    return "", attribution


def _component_resolve(name: str, spec: ComponentSpec | None, stel_ids: list[str]) -> StyleComponent:
    """The existing component, or (with `spec`) an unsaved new one that the import's transaction saves."""
    existing = StyleComponent.objects.filter(name=name).first()
    if existing is not None or spec is None:
        return existing or component_get(name=name)
    labels = spec.labels or labels_from_stel_ids(stel_ids) or ("style_1", "style_2")
    labels = tuple(STEL_ID_TAGS.get(label, label) for label in labels) if spec.labels is None else labels
    return component_build(name=name, label_1=labels[0], label_2=labels[1], kind=spec.kind,
                           description=spec.description)


def _stel_rows_normalize(
    rows: list[StelRow], normalize: Callable[[str], str] | None
) -> tuple[list[StelRow], int]:
    if normalize is None:
        return rows, 0
    out, changed = [], 0
    for row in rows:
        texts = {key: getattr(row, key) for key in ("anchor_1", "anchor_2", "sentence_1", "sentence_2")}
        new = {key: normalize(text) if text.strip() else text for key, text in texts.items()}
        changed += sum(new[key] != texts[key] for key in texts)
        out.append(dataclasses.replace(row, **new))
    return out, changed
