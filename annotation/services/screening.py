"""Which screening questions a study may mix into its batches: active ones of the study's style components, in the
study's language (`ScreeningQuestion.language`; a French study never shows an English check), that are a fair
(obvious) item in the study's setup. A study that asks for screening questions and has too few is refused, at
creation and when it is opened (`study_open`)."""
from __future__ import annotations

from collections.abc import Iterable

from annotation.error_codes import NO_SCREENING_IN_LANGUAGE
from annotation.models import ORDERING_KINDS, Study, StudyItem
from annotation.selectors import study_language
from core.errors import ApplicationError
from core.languages import languages_match
from tasks.models import ScreeningQuestion, StyleComponent

HOW_TO_ADD = (
    "Add some first: STEL's published questions (their answers are public: use them for demos only) are loaded by "
    "\"Load STEL's screening questions\" on the admin's screening questions page (/admin/tasks/screeningquestion/) or "
    "the box of that name on \"Create a study\", or by `python manage.py loaddata screening_questions`; private ones "
    "are added or imported there (a TSV in STEL's screening format); or create the study with 0 screening questions "
    "per batch."
)
HOW_TO_ADD_IN_LANGUAGE = (
    "Screening questions in {language}: the project ships a few of its own for fr, de, pt-BR, it, es and ar "
    "(`python manage.py loaddata screening_questions`, demo only: their answers are public); write your own on the "
    "admin's screening questions page (/admin/tasks/screeningquestion/, set its language) or import a TSV in STEL's "
    "screening format with that language; or build candidates from a corpus in the language "
    "(`generate_instances`) and keep the obvious ones; or set 0 screening questions per batch."
)


def screening_questions_for(*, setup: str, component_ids: Iterable[int], language: str = "en"
                            ) -> list[ScreeningQuestion]:
    """Active screening questions of these components in `language` that fit the setup, by name."""
    pool = ScreeningQuestion.objects.filter(active=True, component_id__in=list(component_ids)).order_by("name")
    return [question for question in pool if question.fits(setup) and languages_match(question.language, language)]


def study_screening_pool(*, study: Study) -> list[ScreeningQuestion]:
    """The screening questions a batch of this study draws from (one query with its component subquery), in the
    study's language."""
    components = StudyItem.objects.filter(study=study, component__isnull=False).values("component_id")
    pool = ScreeningQuestion.objects.filter(active=True, component_id__in=components)
    language = study_language(study)
    return [question for question in pool
            if question.fits(study.item_kind) and languages_match(question.language, language)]


def study_screening_check(*, study: Study) -> None:
    """Refuse to open a study that asks for more screening questions per batch than it has in its language."""
    if study.item_kind not in ORDERING_KINDS or study.screening_per_batch <= 0:
        return
    found = len(study_screening_pool(study=study))
    if found >= study.screening_per_batch:
        return
    language = study_language(study)
    raise ApplicationError(
        f"Study '{study.slug}' cannot be opened: it asks for {study.screening_per_batch} screening question(s) per "
        f"batch, but only {found} active one(s) in its language ({language}) fit its components and the "
        f"{study.item_kind} setup. {HOW_TO_ADD_IN_LANGUAGE.format(language=language)}",
        code=NO_SCREENING_IN_LANGUAGE, status=409, field="screening_per_batch",
        details={"screening_per_batch": [f"{found} active screening question(s) in {language}"]})


def screening_require(*, item_kind: str, component_ids: Iterable[int], screening_per_batch: int,
                      language: str = "en") -> None:
    """Refuse a study that asks for `screening_per_batch` screening questions per batch and cannot get them in its
    `language`."""
    if item_kind not in ORDERING_KINDS or screening_per_batch <= 0:
        return
    component_ids = sorted(set(component_ids))
    found = screening_questions_for(setup=item_kind, component_ids=component_ids, language=language)
    if len(found) >= screening_per_batch:
        return
    names = ", ".join(
        StyleComponent.objects.filter(pk__in=component_ids).order_by("name").values_list("name", flat=True)
    )
    raise ApplicationError(
        f"Screening questions per batch: {screening_per_batch} asked, "
        f"but only {len(found)} active screening question(s) fit component(s) {names or '(none)'} in the {item_kind} "
        f"setup in the study's language ({language}). "
        f"{HOW_TO_ADD if languages_match(language, 'en') else HOW_TO_ADD_IN_LANGUAGE.format(language=language)}",
        details={"screening_per_batch": [f"{len(found)} active screening question(s) for {names} ({item_kind})"]},
        field="screening_per_batch",  # the code of before (invalid); opening says no_screening_in_language
    )
