"""Which screening questions a study may mix into its batches: active ones of the study's style components that are
a fair (obvious) item in the study's setup. A study that asks for screening questions and has none is refused."""
from __future__ import annotations

from collections.abc import Iterable

from annotation.models import ORDERING_KINDS, Study, StudyItem
from core.errors import ApplicationError
from tasks.models import ScreeningQuestion, StyleComponent

HOW_TO_ADD = (
    "Add some first: STEL's published questions (their answers are public: use them for demos only) are loaded by "
    "\"Load STEL's screening questions\" on the admin's screening questions page (/admin/tasks/screeningquestion/) or "
    "the box of that name on \"Create a study\", or by `python manage.py loaddata screening_questions`; private ones "
    "are added or imported there (a TSV in STEL's screening format); or create the study with 0 screening questions "
    "per batch."
)


def screening_questions_for(*, setup: str, component_ids: Iterable[int]) -> list[ScreeningQuestion]:
    """Active screening questions of these components that fit the setup, by name."""
    pool = ScreeningQuestion.objects.filter(active=True, component_id__in=list(component_ids)).order_by("name")
    return [question for question in pool if question.fits(setup)]


def study_screening_pool(*, study: Study) -> list[ScreeningQuestion]:
    """The screening questions a batch of this study draws from (one query with its component subquery)."""
    components = StudyItem.objects.filter(study=study, component__isnull=False).values("component_id")
    pool = ScreeningQuestion.objects.filter(active=True, component_id__in=components)
    return [question for question in pool if question.fits(study.item_kind)]


def screening_require(*, item_kind: str, component_ids: Iterable[int], screening_per_batch: int) -> None:
    """Refuse a study that asks for `screening_per_batch` screening questions per batch and cannot get them."""
    if item_kind not in ORDERING_KINDS or screening_per_batch <= 0:
        return
    component_ids = sorted(set(component_ids))
    found = screening_questions_for(setup=item_kind, component_ids=component_ids)
    if len(found) >= screening_per_batch:
        return
    names = ", ".join(
        StyleComponent.objects.filter(pk__in=component_ids).order_by("name").values_list("name", flat=True)
    )
    raise ApplicationError(
        f"Screening questions per batch: {screening_per_batch} asked, "
        f"but only {len(found)} active screening question(s) fit component(s) {names or '(none)'} in the {item_kind} "
        f"setup. {HOW_TO_ADD}",
        details={"screening_per_batch": [f"{len(found)} active screening question(s) for {names} ({item_kind})"]},
        field="screening_per_batch",
    )
