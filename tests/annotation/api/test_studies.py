"""The responses export through the API: pseudonyms in every format, raw ids only with the personal-data
permission (403 without it) and logged; the decisions CSV keeps raw ids for the platform and logs who took it."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from core.models import PersonalDataAccess
from core.pseudonyms import is_pseudonym
from tests.annotation.services.test_exports import DISTINCT_IDS, assert_no_raw_id, distinctive_study

pytestmark = pytest.mark.django_db


def client_with(*codenames: str) -> tuple[APIClient, User]:
    user = User.objects.create_user("researcher", password="pw", is_staff=True)
    for codename in codenames:
        app, name = codename.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=name))
    user = User.objects.get(pk=user.pk)  # fresh permission cache
    api = APIClient()
    api.force_authenticate(user)
    return api, user


def body_of(response) -> str:
    return b"".join(response.streaming_content).decode()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_api_bodies_carry_pseudonyms(fmt):
    study, _ = distinctive_study()
    api, _ = client_with("annotation.view_response")
    response = api.get(f"/api/v1/studies/{study.slug}/responses/", {"format": fmt})
    assert response.status_code == 200
    text = body_of(response)
    assert_no_raw_id(text)
    rows = list(csv.DictReader(io.StringIO(text))) if fmt == "csv" else [json.loads(x) for x in text.splitlines()]
    assert len(rows) == 6 and all(is_pseudonym(row["participant"]) for row in rows)
    salted = body_of(api.get(f"/api/v1/studies/{study.slug}/responses/", {"format": fmt, "salt": "r2"}))
    assert_no_raw_id(salted)
    assert salted != text
    assert not PersonalDataAccess.objects.exists()


def test_raw_ids_are_refused_without_the_personal_data_permission():
    study, _ = distinctive_study()
    api, _ = client_with("annotation.view_response")
    response = api.get(f"/api/v1/studies/{study.slug}/responses/", {"raw_ids": "true"})
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert_no_raw_id(response.content.decode())
    assert not PersonalDataAccess.objects.exists()


def test_raw_ids_with_the_permission_are_logged():
    study, _ = distinctive_study()
    api, user = client_with("annotation.view_response", "core.view_personal_data")
    response = api.get(f"/api/v1/studies/{study.slug}/responses/", {"raw_ids": "true", "format": "jsonl"})
    assert response.status_code == 200
    text = body_of(response)
    assert all(raw in text for raw in DISTINCT_IDS)
    log = PersonalDataAccess.objects.get()
    assert (log.user_id, log.door, log.people, log.study_slug) == (user.pk, "api", 3, study.slug)


def test_the_decisions_csv_keeps_raw_ids_and_logs_the_access():
    study, _ = distinctive_study()
    api, user = client_with("annotation.view_participant")
    response = api.get(f"/api/v1/studies/{study.slug}/decisions/")
    assert response.status_code == 200
    assert "PROLIFICzz91Qx7Kq" in response.content.decode()
    log = PersonalDataAccess.objects.get()
    assert (log.user_id, log.door) == (user.pk, "api") and "decisions" in log.what
