"""The admin's erasure door (annotation/admin/erasure.py): find by id → the dry run as the confirmation page → the
erasure; both permissions checked on GET and POST; linked from the index and the participants' list; after it the
raw id is in no table (the admin's LogEntry, sessions and the access log included)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from annotation.models import Participant
from core.models import ErasureTombstone, PersonalDataAccess
from core.pseudonyms import person_key
from tests import factories as f
from tests.core.test_erasure import rows_mentioning

pytestmark = pytest.mark.django_db

RAW = "5f0c1e2d3b4a5968778a9b0d"
URL = "/admin/annotation/participant/erase/"


@pytest.fixture
def person() -> Participant:
    study, _ = f.annotated_study(answers=[["S2-S1", "S1-S2"], ["S2-S1", "S2-S1"]])
    Participant.objects.filter(study=study, external_id="p0").update(external_id=RAW)
    return Participant.objects.get(external_id=RAW)


def _staff(client, *codenames: str) -> User:  # noqa: ANN001
    user = User.objects.create_user("dpo", password="pw", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_participant", *codenames]))
    client.force_login(user)
    return user


def test_find_dry_run_then_erase_leaves_the_raw_id_nowhere(admin_client, person):
    index = admin_client.get("/admin/")
    assert URL.encode() in index.content and b"Find a participant by id" in index.content
    listing = admin_client.get("/admin/annotation/participant/")
    assert b'id="participant-erase-link"' in listing.content
    assert admin_client.get(URL).status_code == 200
    dry = admin_client.post(URL, {"platform": "prolific", "external_id": RAW, "reason": "withdrawal"})
    assert dry.status_code == 200 and b'id="erase-confirm"' in dry.content
    assert b"annotation.Participant" in dry.content and b"annotation.Response" in dry.content
    assert Participant.objects.filter(external_id=RAW).exists() and not ErasureTombstone.objects.exists()
    done = admin_client.post(URL, {"platform": "prolific", "external_id": RAW, "reason": "withdrawal",
                                   "confirm": "erase"})
    assert done.status_code == 200 and b'id="erase-done"' in done.content, done.content[-2000:]
    assert RAW.encode() not in done.content
    key = person_key(platform="prolific", external_id=RAW)
    assert key.encode() in done.content
    assert not Participant.objects.filter(external_id=RAW).exists()
    assert ErasureTombstone.objects.get().requested_by == "admin"
    assert rows_mentioning(RAW) == {}  # LogEntry, sessions, the access log, the tombstone included
    assert PersonalDataAccess.objects.filter(door="admin", what__contains=key).count() == 2


def test_an_unknown_id_is_a_clear_message_and_erases_nothing(admin_client, person):
    page = admin_client.post(URL, {"platform": "prolific", "external_id": "ffff0000ffff", "confirm": "erase"})
    assert b'id="erase-error"' in page.content and b"nothing was erased" in page.content
    assert not ErasureTombstone.objects.exists()


@pytest.mark.parametrize(("codenames", "allowed"), [
    ((), False), (("delete_participant",), False), (("view_personal_data",), False),
    (("view_personal_data", "delete_participant"), True),
])
def test_both_permissions_are_needed_on_get_and_post(client, person, codenames, allowed):
    _staff(client, *codenames)
    assert client.get(URL).status_code == (200 if allowed else 403)
    post = client.post(URL, {"platform": "prolific", "external_id": RAW, "confirm": "erase"})
    assert post.status_code == (200 if allowed else 403)
    assert Participant.objects.filter(external_id=RAW).exists() is not allowed
    assert (URL.encode() in client.get("/admin/").content) is allowed
    assert (b"participant-erase-link" in client.get("/admin/annotation/participant/").content) is allowed


def test_the_dry_run_page_says_how_many_imported_annotators_and_ratings_go(admin_client, person):
    imported = f.ParticipantFactory(study=f.StudyFactory(slug="imp"), platform="imported", external_id=RAW)
    f.ResponseFactory(participant=imported, study_item__study=imported.study)
    f.ResponseFactory(participant=imported, study_item__study=imported.study)
    dry = admin_client.post(URL, {"platform": "prolific", "external_id": RAW})
    assert b'id="erase-imported"' in dry.content
    assert b"that would be erased:\n1 participant(s), 2 rating(s)" in dry.content
    assert Participant.objects.filter(external_id=RAW).count() == 2
    done = admin_client.post(URL, {"platform": "prolific", "external_id": RAW, "confirm": "erase"})
    assert b" erased:\n1 participant(s), 2 rating(s)" in done.content
    assert not Participant.objects.filter(external_id=RAW).exists()
    assert b'<option value="imported">' in admin_client.get(URL).content
