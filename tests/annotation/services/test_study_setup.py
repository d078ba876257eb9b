"""study_open: a study without items stays a draft; one with items opens."""
from __future__ import annotations

import pytest

from annotation.models import Study
from annotation.services.study_setup import study_open
from core.errors import ApplicationError
from tests.factories import StudyFactory, StudyItemFactory

pytestmark = pytest.mark.django_db


def test_a_study_without_items_cannot_open():
    study = StudyFactory(status=Study.Status.DRAFT)
    with pytest.raises(ApplicationError):
        study_open(study=study)
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT


def test_a_study_with_items_opens():
    study = StudyFactory(status=Study.Status.DRAFT)
    StudyItemFactory(study=study)
    assert study_open(study=study).status == Study.Status.ACTIVE
    study.refresh_from_db()
    assert study.status == Study.Status.ACTIVE
