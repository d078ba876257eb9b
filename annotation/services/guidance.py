"""A guide for adaptive stopping: per item, the answer a model gave in every order of display (pushed down here by
`scoring.model_annotators.guidance`, since `annotation` never imports `scoring`).

With a guide, an adaptive study also closes an item once its first `guide_stop_after` valid human answers all equal
the guide's answer (`adaptive.guide_agrees`); items where the model was order-sensitive, gave no answer, or
disagrees with those first answers keep the plain rule (stop once the m-of-k decision is settled, else k answers).
The guide is never shown to participants and never counted as an answer.
"""
from __future__ import annotations

from django.db import transaction

from annotation.error_codes import INVALID_STOP_AFTER, NOT_ADAPTIVE, UNKNOWN_ITEM
from annotation.models import Study, StudyItem
from annotation.services.adaptive import item_refresh_closed
from core.errors import ApplicationError


def study_guide_set(*, study: Study, answers: dict[int, str], stop_after: int, source: str) -> dict[str, int]:
    """Replace the study's guide answers (item id → answer; items not named get none) and recheck closures."""
    if not study.adaptive_stopping:
        raise ApplicationError(f"Study '{study.slug}' is not adaptive: a guide only stops items early in adaptive "
                               "studies (create the study with adaptive collection).", code=NOT_ADAPTIVE,
                               field="stop_after")
    k = study.annotators_per_item
    if isinstance(stop_after, bool) or not isinstance(stop_after, int) or not 1 <= stop_after <= k:
        raise ApplicationError(f"Stop after: the number of agreeing human answers must be between 1 and the "
                               f"study's k ({k}); got {stop_after!r}.", code=INVALID_STOP_AFTER, field="stop_after")
    known = set(StudyItem.objects.filter(study=study, pk__in=list(answers)).values_list("pk", flat=True))
    unknown = sorted(set(answers) - known)
    if unknown:
        raise ApplicationError(f"guide answers name items that are not in study '{study.slug}': {unknown[:5]}",
                               code=UNKNOWN_ITEM)
    with transaction.atomic():
        Study.objects.filter(pk=study.pk).update(guide_stop_after=stop_after, guide_source=source[:200])
        study.guide_stop_after, study.guide_source = stop_after, source[:200]
        StudyItem.objects.filter(study=study).exclude(guide_answer="").update(guide_answer="")
        by_answer: dict[str, list[int]] = {}
        for item_id, answer in answers.items():
            if answer:
                by_answer.setdefault(str(answer)[:64], []).append(item_id)
        for answer, ids in by_answer.items():
            StudyItem.objects.filter(pk__in=ids).update(guide_answer=answer)
        changed = 0
        for item in StudyItem.objects.filter(study=study, responses__is_valid=True).distinct().select_related("study"):
            before = item.is_closed
            changed += int(item_refresh_closed(item=item) != before)
    return {"items_with_guide": sum(len(ids) for ids in by_answer.values()), "closures_changed": changed}


def study_guide_clear(*, study: Study) -> None:
    with transaction.atomic():
        Study.objects.filter(pk=study.pk).update(guide_stop_after=None, guide_source="")
        study.guide_stop_after, study.guide_source = None, ""
        StudyItem.objects.filter(study=study).exclude(guide_answer="").update(guide_answer="")
        for item in StudyItem.objects.filter(study=study, is_closed=True).select_related("study"):
            item_refresh_closed(item=item)
