"""rewrite_study_get and signal_settings_update: only rewrite studies, and thresholds on reviewed ones only."""
from __future__ import annotations

import pytest

from annotation.models import ItemKind
from annotation.services.writing_signals.jobs import rewrite_study_get, signal_settings_update
from core.errors import ApplicationError
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def test_only_an_existing_rewrite_study_is_found():
    study = StudyFactory(item_kind=ItemKind.REWRITE)
    assert rewrite_study_get(study.slug) == study
    with pytest.raises(ApplicationError):
        rewrite_study_get("no-such-study")
    with pytest.raises(ApplicationError, match="not rewrites"):
        rewrite_study_get(StudyFactory(item_kind=ItemKind.QUADRUPLE).slug)


def test_thresholds_are_refused_on_a_study_without_review_settings():
    study = StudyFactory(item_kind=ItemKind.REWRITE)
    with pytest.raises(ApplicationError, match="not a reviewed rewrite study"):
        signal_settings_update(study=study, auto_reject=["mostly_pasted"])
