"""study_items_source_check: a Likert/ranking study's items come from exactly one source."""
from __future__ import annotations

import pytest

from annotation.services.study_build import study_items_source_check
from core.errors import ApplicationError


def test_one_source_is_accepted_and_two_are_refused_naming_the_second():
    study_items_source_check(items="items.jsonl", outputs=None, outputs_study=None)
    with pytest.raises(ApplicationError) as refused:
        study_items_source_check(items="items.jsonl", outputs="outputs.tsv", outputs_study=None)
    assert refused.value.field == "outputs"
