"""study_open: a study without items stays a draft; one with items opens. study_close: no new sessions, open
sessions end, closing twice keeps the first close; its doors."""
from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Study
from annotation.services.study_setup import study_close, study_open
from core.errors import ApplicationError
from tests.factories import ParticipantFactory, StudyFactory, StudyItemFactory

pytestmark = pytest.mark.django_db


def test_a_study_without_items_cannot_open():
    study = StudyFactory(status=Study.Status.DRAFT)
    with pytest.raises(ApplicationError):
        study_open(study=study)
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT


def test_a_study_with_items_opens():
    study = StudyFactory(status=Study.Status.DRAFT, screening_per_batch=0)  # screening: tests/…/test_screening.py
    StudyItemFactory(study=study)
    assert study_open(study=study).status == Study.Status.ACTIVE
    study.refresh_from_db()
    assert study.status == Study.Status.ACTIVE


# --- closing ------------------------------------------------------------------------------------------------------


def _open_session(study: Study) -> tuple:
    from annotation.models import Batch, Reservation

    item = StudyItemFactory(study=study)
    person = ParticipantFactory(study=study)
    batch = Batch.objects.create(study=study, participant=person, number=1, token=f"tok-{study.pk}",
                                 state=Batch.State.ITEMS, expires_at=timezone.now() + timedelta(minutes=30))
    reservation = Reservation.objects.create(batch=batch, participant=person, study_item=item, slot=1, position=0,
                                             public_id=f"pub-{study.pk}", expires_at=batch.expires_at)
    return batch, reservation


def test_closing_ends_open_sessions_and_refuses_new_ones():
    from annotation.services.session_creation import session_create

    study = StudyFactory(status=Study.Status.ACTIVE)
    batch, reservation = _open_session(study)

    result = study_close(study=study)

    assert result["already_closed"] is False and result["sessions_ended"] == 1
    assert result["reservations_released"] == 1
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED and study.closed_at is not None
    batch.refresh_from_db()
    reservation.refresh_from_db()
    assert batch.state == "expired" and reservation.released
    with pytest.raises(ApplicationError) as refused:
        session_create(slug=study.slug, platform="anonymous")
    assert refused.value.status == 404


def test_closing_twice_keeps_the_first_close():
    study = StudyFactory(status=Study.Status.ACTIVE)
    first = study_close(study=study)["closed_at"]
    again = study_close(study=study)
    assert again["already_closed"] is True and again["closed_at"] == first


def test_reopening_clears_closed_at_and_is_refused_after_retention():
    study = StudyFactory(status=Study.Status.ACTIVE, screening_per_batch=0)
    StudyItemFactory(study=study)
    study_close(study=study)
    reopened = study_open(study=study)
    assert reopened.status == Study.Status.ACTIVE and reopened.closed_at is None
    study_close(study=study)
    Study.objects.filter(pk=study.pk).update(retention_applied_at=timezone.now())
    with pytest.raises(ApplicationError) as refused:
        study_open(study=study)
    assert refused.value.code == "wrong_state"
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED


def test_close_study_command_prints_a_json_summary():
    study = StudyFactory(status=Study.Status.ACTIVE)
    out = StringIO()
    call_command("close_study", "--study", study.slug, stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["study"] == study.slug and summary["status"] == "closed"


def test_the_api_closes_with_the_change_permission_only(api, anonymous_api, django_user_model):
    from rest_framework.test import APIClient

    study = StudyFactory(status=Study.Status.ACTIVE)
    viewer = django_user_model.objects.create_user(username="viewer", password="x")
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.post(f"/api/v1/studies/{study.slug}/close/").status_code == 403
    study.refresh_from_db()
    assert study.status == Study.Status.ACTIVE
    response = api.post(f"/api/v1/studies/{study.slug}/close/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "closed" and response.json()["already_closed"] is False
