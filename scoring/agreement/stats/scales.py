"""What is measured: the level of measurement and the value domain of a study's answers."""
from __future__ import annotations

from dataclasses import dataclass, field

from annotation.models import ORDERING_KINDS, ItemKind, Study
from core.errors import ApplicationError
from scoring.error_codes import INVALID_LEVEL, INVALID_SCALE, QUESTION_REQUIRED, UNKNOWN_QUESTION

from .alpha import LEVELS


@dataclass(frozen=True)
class Scale:
    level: str
    numeric: bool
    domain: list = field(default_factory=list)
    question: str = ""


def scale_parse(text: str) -> tuple[bool, list]:
    """`MIN-MAX` (numeric, e.g. 1-5) or a comma-separated list of categories (e.g. S1-S2,S2-S1)."""
    text = text.strip()
    if "," not in text:
        parts = text.split("-")
        if len(parts) == 2:
            try:
                low, high = int(parts[0]), int(parts[1])
            except ValueError:
                low = high = None
            if low is not None and high is not None:
                if high <= low:
                    raise ApplicationError(f"scale '{text}': MAX must be greater than MIN", code=INVALID_SCALE)
                return True, list(range(low, high + 1))
    categories = [c.strip() for c in text.split(",") if c.strip()]
    if len(categories) < 2 or len(set(categories)) != len(categories):
        raise ApplicationError(
            f"scale '{text}' must be MIN-MAX (e.g. 1-5) or at least two distinct comma-separated categories",
            code=INVALID_SCALE,
        )
    return False, categories


def study_scale(*, study: Study, question: str = "", level: str = "") -> Scale:
    if level and level not in LEVELS:
        raise ApplicationError(f"level '{level}' must be one of {', '.join(LEVELS)}", code=INVALID_LEVEL)
    if study.item_kind in ORDERING_KINDS:
        if level and level != "nominal":
            raise ApplicationError("ordering answers (S1-S2 / S2-S1) are nominal", code=INVALID_LEVEL)
        domain = ["S1-S2", "S2-S1"] if study.item_kind == ItemKind.QUADRUPLE else ["S1", "S2"]
        if study.allow_multiple_setups:
            domain = ["S1-S2", "S2-S1", "S1", "S2"]
        return Scale(level="nominal", numeric=False, domain=domain, question="")
    questions = [q for q in (study.questions or []) if isinstance(q, dict)]
    if question:
        chosen = [q for q in questions if q.get("name") == question]
        if not chosen:
            names = ", ".join(str(q.get("name")) for q in questions) or "none"
            raise ApplicationError(f"study '{study.slug}' has no question '{question}' (has: {names})",
                                   code=UNKNOWN_QUESTION)
        spec = chosen[0]
    elif len(questions) == 1:
        spec = questions[0]
    elif not questions:
        raise ApplicationError(f"study '{study.slug}' defines no questions", code=UNKNOWN_QUESTION)
    else:
        names = ", ".join(str(q.get("name")) for q in questions)
        raise ApplicationError(f"study '{study.slug}' has several questions: choose one ({names})",
                               code=QUESTION_REQUIRED)
    if "categories" in spec:
        numeric, domain = False, list(spec["categories"])
    else:
        numeric, domain = True, list(range(int(spec.get("min", 1)), int(spec.get("max", 5)) + 1))
    chosen_level = level or spec.get("level") or ("ordinal" if numeric else "nominal")
    if chosen_level not in LEVELS:
        raise ApplicationError(f"level '{chosen_level}' must be one of {', '.join(LEVELS)}", code=INVALID_LEVEL)
    if not numeric and chosen_level != "nominal":
        raise ApplicationError(f"categorical question '{spec.get('name')}' can only be nominal", code=INVALID_LEVEL)
    return Scale(level=chosen_level, numeric=numeric, domain=domain, question=str(spec.get("name", "")))
