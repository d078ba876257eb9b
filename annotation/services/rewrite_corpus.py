"""Rewrites become a corpus: the accepted rewrites of a rewrite study as a parallel corpus, one
pair per (source, accepted rewrite), with the pairs of one source kept together (multi-reference), the writer and
the review on every pair, and train/tune/test splits drawn by source with a seed. The corpus is an ordinary
`tasks.Corpus` (format "built"), so `generate_instances` takes it unchanged.

A corpus leaves the database (benchmark exports, the card), so a writer is named by their keyed pseudonym
(core.pseudonyms), never their platform id, and their persona by its k-anonymous form (core.anonymity) over the
corpus's writers; the persona-split builder reads the answers themselves to choose the pairs."""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotation.error_codes import (
    INVALID_REFERENCES,
    INVALID_SIDE,
    INVALID_SPLIT_BY,
    INVALID_SPLITS,
    NO_PAIRS,
    NO_REWRITES,
    NOT_A_REWRITE_STUDY,
    SIGNALS_NOT_COMPUTED,
    UNKNOWN_STUDY,
    UNKNOWN_TARGET_STYLE,
)
from annotation.models import ItemKind, Response, RewriteReview, RewriteSettings, Study, WritingSignal
from annotation.services.writing_signals.registry import SPECS, auto_reject_validate
from annotation.services.writing_signals.services import flagged_response_ids, study_signal_summary
from core.anonymity import persona_k_anonymize
from core.errors import ApplicationError
from core.pseudonyms import pseudonym
from tasks.models import Corpus, StyleComponent
from tasks.services.imports import PairRow, component_get, corpus_store

SPLITS = ("train", "tune", "test")


def accepted_rewrites(*, study: Study) -> list[Response]:
    """The rewrites that count as accepted: valid (their writer was not excluded), on a study item, and, in a
    reviewed rewrite study (one with `RewriteSettings.review_required`), accepted by a reviewer.

    The one place that defines acceptance."""
    reviewed = RewriteSettings.objects.filter(study=study, review_required=True).exists()
    extra = {"review__status": RewriteReview.Status.ACCEPTED} if reviewed else {}
    return list(Response.objects.filter(study=study, is_valid=True, study_item__isnull=False, **extra)
                .select_related("study_item", "participant", "batch", "review__reviewer")
                .order_by("study_item__position", "answered_at", "pk"))


def writer_persona(*, response: Response) -> dict[str, Any]:
    """What the platform knows about the writer: their answers to the study's questionnaire before writing (the
    eligibility questions of the batch the rewrite was written in)."""
    if response.participant.persona:  # the persona questionnaire (services/rewrites.py)
        return dict(response.participant.persona)
    answers = (response.batch.eligibility_answers if response.batch else {}) or {}
    return dict(answers.get("answers", {})) if isinstance(answers, dict) else {}


def released_personas(*, rewrites: list[Response]) -> tuple[dict[int, dict[str, str]], dict[str, Any]]:
    """Per rewrite (response id), the persona of its writer as a corpus may hold it: k-anonymous over the writers of
    these rewrites (one persona per writer), with the counts of writers generalised and withheld."""
    per_writer = {r.participant_id: writer_persona(response=r) for r in rewrites}
    result = persona_k_anonymize(personas=per_writer)
    return {r.pk: result.released[r.participant_id] for r in rewrites}, result.summary()


def _writer(response: Response, personas: dict[int, dict[str, str]]) -> dict[str, Any]:
    person = response.participant
    return {"participant": pseudonym(platform=person.platform, external_id=person.external_id),
            "platform": person.platform, "persona": personas.get(response.pk, {}), "response": response.pk}


def _review(response: Response) -> dict[str, Any]:
    review = getattr(response, "review", None)  # None: the reverse one-to-one is missing
    if review is None:
        return {"status": "accepted", "rule": "valid response of a writer who was not excluded"}
    return {"status": review.status, "reviewer": review.reviewer.get_username() if review.reviewer else "",
            "decided_at": review.decided_at.isoformat() if review.decided_at else None,
            "rule": "accepted by a reviewer"}


def _rewrite_pairs(*, study: Study, by_source: dict[str, list[Response]], labels: dict[str, int],
                   split_of: dict[str, str], references: str, rewrite_side: int | None,
                   component: StyleComponent, personas: dict[int, dict[str, str]]) -> list[PairRow]:
    """(source, rewrite) pairs: the source on one side, each kept rewrite on the side of the items' target style."""
    pairs: list[PairRow] = []
    for source_id, group in by_source.items():
        kept = group[:1] if references == "first" else group
        item = group[0].study_item
        target = item.payload.get("target_style", "")
        side = rewrite_side or labels.get(target)
        if side is None:
            raise ApplicationError(f"item {source_id!r}: target style {target!r} is neither {component.label_1!r} "
                                   f"nor {component.label_2!r} of component {component.name!r}; give the rewrite side",
                                   code=UNKNOWN_TARGET_STYLE, field="rewrite_side")
        source_text = item.payload.get("source", "")
        for n, response in enumerate(kept, start=1):
            texts = (source_text, response.answer) if side == 2 else (response.answer, source_text)
            pairs.append(PairRow(source_id=f"{source_id}#{n}", text_1=texts[0], text_2=texts[1], metadata={
                "study": study.slug, "group": source_id, "reference": n, "n_references": len(kept),
                "split": split_of[source_id], "response": response.pk, "writer": _writer(response, personas),
                "review": _review(response),
            }))
    return pairs


def _persona_pairs(*, study: Study, by_source: dict[str, list[Response]], split_by: str, labels: dict[str, int],
                   split_of: dict[str, str], references: str, personas: dict[int, dict[str, str]]) -> list[PairRow]:
    attribute = split_by.removeprefix("persona.")
    if not split_by.startswith("persona.") or not attribute:
        raise ApplicationError(f"Split by must be persona.ATTRIBUTE, not {split_by!r}", code=INVALID_SPLIT_BY,
                               field="split_by")
    pairs: list[PairRow] = []
    for source_id, group in by_source.items():
        sides: dict[int, list[Response]] = {1: [], 2: []}
        for response in group:
            side = labels.get(str(writer_persona(response=response).get(attribute, "")))
            if side:
                sides[side].append(response)
        matched = list(zip(sides[1], sides[2], strict=False))[: 1 if references == "first" else None]
        for n, (first, second) in enumerate(matched, start=1):
            pairs.append(PairRow(source_id=f"{source_id}#{n}", text_1=first.answer, text_2=second.answer, metadata={
                "study": study.slug, "group": source_id, "reference": n, "n_references": len(matched),
                "split": split_of[source_id], "source_text": first.study_item.payload.get("source", ""),
                "split_by": split_by, "writer_1": _writer(first, personas), "writer_2": _writer(second, personas),
                "review": {"status": "accepted", "rule": "valid responses of writers who were not excluded"},
            }))
    return pairs


def _review_summary(study: Study) -> dict[str, Any]:
    """What the reviewers decided on the study's rewrites: counts per status and rejection reason, and who decided
    (recorded on the corpus, so the dataset card can say how its pairs were chosen)."""
    reviews = RewriteReview.objects.filter(response__study=study)
    statuses: dict[str, int] = defaultdict(int)
    reasons: dict[str, int] = defaultdict(int)
    reviewers: set[str] = set()
    for status, reason, reviewer in reviews.values_list("status", "reason", "reviewer__username"):
        statuses[status] += 1
        if reason:
            reasons[reason] += 1
        if reviewer:
            reviewers.add(reviewer)
    return {"statuses": dict(statuses), "rejection_reasons": dict(reasons), "reviewers": sorted(reviewers)}


def exclusion_parse(*, text: str) -> list[str] | None:
    """`exclude_flagged`: "" (keep flagged rewrites), "all", or signal names separated by commas."""
    text = (text or "").strip()
    if not text:
        return None
    if text == "all":
        return list(SPECS)
    return auto_reject_validate(text, field="exclude_flagged")


def splits_parse(*, text: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError:
        parts = ()
    if len(parts) != 3 or any(p < 0 for p in parts) or abs(sum(parts) - 1) > 1e-6:
        raise ApplicationError(f"Splits must be three non-negative fractions for train,tune,test that sum to 1, "
                               f"not {text!r}", code=INVALID_SPLITS, field="splits")
    return parts  # type: ignore[return-value]


def splits_assign(*, sources: list[str], fractions: tuple[float, float, float], seed: int) -> dict[str, str]:
    """Every source in exactly one split: a seeded shuffle cut at the fractions (tune and test rounded, train the
    rest), so the same sources and seed give the same splits."""
    order = sorted(sources)
    random.Random(seed).shuffle(order)
    n_test = round(len(order) * fractions[2])
    n_tune = round(len(order) * fractions[1])
    split_of = {}
    for index, source in enumerate(order):
        split_of[source] = "test" if index < n_test else "tune" if index < n_test + n_tune else "train"
    return split_of


def corpus_build_from_rewrites(
    *, study_slug: str, name: str, component: str, seed: int = 0, splits: str = "0.8,0.1,0.1",
    references: str = "all", rewrite_side: int | None = None, split_by: str = "", replace: bool = False,
    exclude_flagged: str = "", progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """`references="first"` keeps one rewrite per source (the first accepted), as STEL took GYAFC's ref0; "all"
    keeps every accepted rewrite, the pairs of one source sharing `metadata.group`.

    `split_by="persona.ATTR"` makes a two-style corpus from one persona attribute, as PASTEL does: the component's
    two labels are two values of ATTR, and a pair is two rewrites of one source, one by a writer of each value.

    `exclude_flagged` ("all", or signal names separated by commas) leaves out the accepted rewrites those writing
    signals flagged; the corpus records how many, and per signal what the review did with the flagged ones."""
    study = Study.objects.filter(slug=study_slug).first()
    if study is None:
        raise ApplicationError(f"study {study_slug!r} does not exist", code=UNKNOWN_STUDY, status=404)
    if study.item_kind != ItemKind.REWRITE:
        raise ApplicationError(f"study {study_slug!r} holds {study.item_kind} items, not rewrites",
                               code=NOT_A_REWRITE_STUDY)
    if references not in ("all", "first"):
        raise ApplicationError(f"References must be all or first, not {references!r}", code=INVALID_REFERENCES,
                               field="references")
    if rewrite_side not in (None, 1, 2):
        raise ApplicationError("Rewrite side must be 1 or 2", code=INVALID_SIDE, field="rewrite_side")
    fractions = splits_parse(text=splits)
    style = component_get(name=component)
    excluded_signals = exclusion_parse(text=exclude_flagged)
    rewrites = accepted_rewrites(study=study)
    if not rewrites:
        raise ApplicationError(f"study {study_slug!r} has no accepted rewrites", code=NO_REWRITES)
    excluded: set[int] = set()
    if excluded_signals is not None:
        measured = set(WritingSignal.objects.filter(response__study=study).values_list("response_id", flat=True))
        unmeasured = [r.pk for r in rewrites if r.pk not in measured]
        if unmeasured:
            raise ApplicationError(f"{len(unmeasured)} accepted rewrite(s) of study {study_slug!r} have no writing "
                                   "signals yet: measure them first (writing_signals --study, or the review queue's "
                                   "button)", code=SIGNALS_NOT_COMPUTED, field="exclude_flagged")
        excluded = flagged_response_ids(study=study, signals=excluded_signals) & {r.pk for r in rewrites}
        rewrites = [r for r in rewrites if r.pk not in excluded]
        if not rewrites:
            raise ApplicationError(f"every accepted rewrite of study {study_slug!r} is flagged by "
                                   f"{', '.join(excluded_signals)}", code=NO_REWRITES, field="exclude_flagged")
    by_source: dict[str, list[Response]] = defaultdict(list)
    for response in rewrites:
        by_source[response.study_item.external_id].append(response)
    split_of = splits_assign(sources=list(by_source), fractions=fractions, seed=seed)
    labels = {style.label_1: 1, style.label_2: 2}
    personas, persona_release = released_personas(rewrites=rewrites)
    if split_by:
        pairs = _persona_pairs(study=study, by_source=by_source, split_by=split_by, labels=labels,
                               split_of=split_of, references=references, personas=personas)
        if not pairs:
            raise ApplicationError(f"no source has rewrites by writers with {split_by} = {style.label_1!r} and "
                                   f"{style.label_2!r}", code=NO_PAIRS)
    else:
        pairs = _rewrite_pairs(study=study, by_source=by_source, labels=labels, split_of=split_of,
                               references=references, rewrite_side=rewrite_side, component=style,
                               personas=personas)
    counts = {split: sum(1 for p in pairs if p.metadata["split"] == split) for split in SPLITS}
    sources_per_split = {split: sum(1 for s in split_of.values() if s == split) for split in SPLITS}
    params: dict[str, Any] = {
        "builder": "rewrites", "study": study.slug, "seed": seed, "splits": dict(zip(SPLITS, fractions, strict=True)),
        "references": references, "split_by": split_by, "pairs_per_split": counts,
        "sources_per_split": sources_per_split, "accepted_rewrites": len(rewrites),
        "rewrites_not_in_a_pair": len(rewrites) - len(pairs) * (2 if split_by else 1),
        "exclude_flagged": excluded_signals, "excluded_flagged": len(excluded),
        "writing_signals": study_signal_summary(study=study, excluded=excluded),
        "review": _review_summary(study),
        "writers": {"ids": "keyed pseudonyms", "persona_k_anonymity": persona_release},
        "source_filters": getattr(RewriteSettings.objects.filter(study=study).first(), "filters", {}) or {},
    }
    with transaction.atomic():
        return corpus_store(name=name, component=style, import_format=Corpus.Format.BUILT, pairs=pairs,
                            source=f"rewrite study {study.slug}", params=params, n_rows_read=len(rewrites),
                            n_skipped=params["rewrites_not_in_a_pair"], replace=replace, progress=progress)
