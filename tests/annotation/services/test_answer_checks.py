import pytest

from annotation.models import ItemKind, Study
from annotation.services.answer_checks import validate_answer
from core.errors import ApplicationError


def test_an_ordering_answer_is_stored_in_canonical_order_and_an_unknown_choice_is_refused():
    shown = {"kind": ItemKind.QUADRUPLE, "choices": ["S1-S2", "S2-S1"], "swapped": True}
    assert validate_answer(study=Study(), shown=shown, answer="S1-S2") == [("", "S2-S1", None)]
    with pytest.raises(ApplicationError) as refused:
        validate_answer(study=Study(), shown=shown, answer="S3")
    assert refused.value.details == {"answer": ["answer must be one of ['S1-S2', 'S2-S1']."]}


def test_a_likert_rating_outside_its_scale_is_refused():
    study = Study(questions=[{"name": "fluency", "min": 1, "max": 5}])
    shown = {"kind": ItemKind.LIKERT}
    assert validate_answer(study=study, shown=shown, answer={"fluency": 4}) == [("fluency", "4", 4.0)]
    with pytest.raises(ApplicationError, match="outside 1…5"):
        validate_answer(study=study, shown=shown, answer={"fluency": 6})
