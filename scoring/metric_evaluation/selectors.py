"""Reads for the meta-evaluation: a Likert study's rated items and their mean valid human rating."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Avg, Count

from annotation.models import ItemKind, Response, Study, StudyItem
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from scoring.error_codes import BAD_ITEM, NO_RATINGS, NOT_LIKERT, UNKNOWN_QUESTION

from .base import MetricItem


@dataclass(frozen=True)
class RatedItem:
    external_id: str
    item: MetricItem
    human: float  # mean of the valid ratings of the chosen question
    n_ratings: int


def likert_study_get(*, slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"study {slug!r} does not exist", code=NOT_FOUND, status=404)
    if study.item_kind != ItemKind.LIKERT:
        raise ApplicationError(
            f"study {slug!r} is a {study.item_kind} study; metric meta-evaluation needs a likert study",
            code=NOT_LIKERT,
        )
    return study


def likert_question_names(study: Study) -> list[str]:
    declared = [q.get("name", "") for q in (study.questions or []) if isinstance(q, dict)]
    answered = Response.objects.filter(study=study).exclude(question="").values_list("question", flat=True).distinct()
    return list(dict.fromkeys([*declared, *answered]))


def rated_items_select(*, study: Study, question: str) -> list[RatedItem]:
    """Items with at least one valid numeric rating of `question`, in study order."""
    names = likert_question_names(study)
    if question not in names:
        raise ApplicationError(
            f"study {study.slug!r} has no question {question!r}; its questions: {', '.join(names) or 'none'}",
            code=UNKNOWN_QUESTION,
        )
    means = {
        row["study_item_id"]: (row["mean"], row["n"])
        for row in Response.objects.filter(
            study=study, question=question, is_valid=True, is_screening=False,
            study_item__isnull=False, value__isnull=False,
        ).values("study_item_id").annotate(mean=Avg("value"), n=Count("id"))
    }
    if not means:
        raise ApplicationError(
            f"study {study.slug!r} has no valid ratings for question {question!r}", code=NO_RATINGS
        )
    rated: list[RatedItem] = []
    for row in StudyItem.objects.filter(pk__in=list(means)).order_by("position", "pk").values(
        "pk", "external_id", "payload"
    ):
        payload = row["payload"] or {}
        for field in ("source", "rewrite"):
            if not isinstance(payload.get(field), str) or not payload[field].strip():
                raise ApplicationError(
                    f"study {study.slug!r}, item {row['external_id']!r}: payload field {field!r} is missing or empty",
                    code=BAD_ITEM,
                )
        reference = payload.get("reference")
        mean, n = means[row["pk"]]
        rated.append(RatedItem(
            external_id=row["external_id"],
            item=MetricItem(
                source=payload["source"], rewrite=payload["rewrite"],
                reference=reference if isinstance(reference, str) and reference.strip() else None,
                target_style=str(payload.get("target_style") or ""), system=str(payload.get("system") or ""),
                dataset=str(payload.get("dataset") or ""),
            ),
            human=float(mean), n_ratings=int(n),
        ))
    return rated


def study_language(study: Study) -> set[str]:
    """The languages of a study's texts, where known: the items' `language` (an import's) and their corpora's."""
    languages = {str(value) for value in StudyItem.objects.filter(study=study, payload__has_key="language")
                 .values_list("payload__language", flat=True).distinct() if value}
    languages |= set(StudyItem.objects.filter(study=study, instance__isnull=False)
                     .values_list("instance__corpus__language", flat=True).distinct())
    return {language for language in languages if language}
