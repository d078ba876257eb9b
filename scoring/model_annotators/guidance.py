"""A finished model run as the guide of its study's adaptive stopping (`annotation.services.guidance`): each item's
guide answer is the answer the model gave in every order of display; items where it was order-sensitive or gave no
answer get none, so they keep the plain adaptive rule (and the full k where that rule needs it)."""
from __future__ import annotations

from typing import Any

from annotation.services.guidance import study_guide_set
from core.errors import ApplicationError
from scoring.error_codes import NOT_COMPUTED
from scoring.models import ModelRun

from .selectors import item_verdicts, model_answers_frame


def model_guidance_apply(*, run: ModelRun, stop_after: int | None = None) -> dict[str, Any]:
    """Set the study's guide answers from the run; `stop_after` (default: one less than the study's m, at least 1)
    is how many first human answers must agree with the guide to stop an item."""
    if not run.is_computed:
        raise ApplicationError(f"Model run #{run.pk} has not finished: a guide needs the model's answers in every "
                               "order.", code=NOT_COMPUTED, status=409)
    study = run.study
    if stop_after is None:
        stop_after = max(1, study.min_correct - 1)
    verdicts = item_verdicts(model_answers_frame(run=run, question=""))
    answers = {int(row.item_id): str(row.consistent) for row in verdicts.itertuples() if row.consistent}
    result = study_guide_set(study=study, answers=answers, stop_after=stop_after,
                             source=f"model run #{run.pk} ({run.label})")
    return {"study": study.slug, "model_run": run.pk, "stop_after": stop_after,
            "items": len(verdicts), "order_sensitive_or_unanswered": len(verdicts) - len(answers), **result}
