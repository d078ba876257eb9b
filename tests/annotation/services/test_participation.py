"""annotation.services.participation: who may take part (a link's platform parameters), how much room one arrival
takes (grace period, time limit, the cap of open batches) and which platform session an arrival belongs to.

The same rules through the participant API, against a live server, are in tests/adversarial/ (platform parameters,
hijacked ids, bot farms)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from annotation.models import Batch, EntryPlatform, Participant
from annotation.services.participation import (
    MTURK_PREVIEW,
    batch_deadline,
    check_room,
    entry_check,
    first_answer_deadline,
    open_batches_count,
    platform_session,
)
from core.errors import ApplicationError
from tests.factories import ParticipantFactory, StudyFactory

pytestmark = pytest.mark.django_db
PID, STUDY_ID = "5f1d" + "a" * 20, "60ab" + "b" * 20
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def refused(**link: str) -> ApplicationError:
    with pytest.raises(ApplicationError) as error:
        entry_check(**link)
    assert error.value.code == "invalid_link" and error.value.status == 400
    return error.value


def test_a_prolific_study_takes_only_well_formed_prolific_links_of_its_own_study() -> None:
    study = StudyFactory(platform=EntryPlatform.PROLIFIC, prolific_study_id=STUDY_ID, allow_anonymous=False)
    good = {"study": study, "platform": "prolific", "participant_id": PID, "study_ref": STUDY_ID,
            "session_ref": "s-1", "assignment": "", "hit": ""}
    entry_check(**good)  # accepted: nothing raised
    assert "PROLIFIC_PID: must be a Prolific id" in refused(**{**good, "participant_id": "abc"}).message
    assert "another Prolific study" in refused(**{**good, "study_ref": "c" * 24}).message
    assert "SESSION_ID: is missing" in refused(**{**good, "session_ref": ""}).message
    assert "placeholder" in refused(**{**good, "participant_id": "{{%PROLIFIC_PID%}}"}).message
    assert "Prolific links only" in refused(**{**good, "platform": "mturk"}).message
    assert "Prolific links only" in refused(**{**good, "platform": Participant.Platform.ANONYMOUS}).message


def test_an_mturk_study_refuses_the_preview_and_malformed_ids() -> None:
    study = StudyFactory(platform=EntryPlatform.MTURK, allow_anonymous=False)
    good = {"study": study, "platform": "mturk", "participant_id": "A1B2C3D4E5", "study_ref": "",
            "session_ref": "", "assignment": "3XYZ3XYZ3XYZ", "hit": "3HIT3HIT3HIT"}
    entry_check(**good)
    assert "MTurk's preview" in refused(**{**good, "assignment": MTURK_PREVIEW}).message
    assert refused(**{**good, "participant_id": "lower-case"}).details == {
        "workerId": ["is missing or malformed (upper-case letters and digits)."]}


def test_anonymous_links_need_a_study_open_to_any_platform_that_allows_them() -> None:
    link = {"platform": Participant.Platform.ANONYMOUS, "participant_id": "", "study_ref": "", "session_ref": "",
            "assignment": "", "hit": ""}
    entry_check(study=StudyFactory(platform=EntryPlatform.ANY, allow_anonymous=True), **link)
    refused(study=StudyFactory(platform=EntryPlatform.ANY, allow_anonymous=False), **link)


def test_a_started_batch_lives_the_grace_period_until_its_first_answer_then_its_time_limit(settings) -> None:
    settings.ANNOTATION_FIRST_ANSWER_GRACE_SECONDS = 300
    study = StudyFactory(batch_time_limit_minutes=30, first_answer_grace_seconds=None)
    assert first_answer_deadline(study=study, now=NOW) == NOW + timedelta(seconds=300)
    study.first_answer_grace_seconds = 7200  # never longer than the time limit
    assert first_answer_deadline(study=study, now=NOW) == NOW + timedelta(minutes=30)
    assert batch_deadline(time_limit_minutes=30, started_at=NOW) == NOW + timedelta(minutes=30)


def test_the_cap_of_open_batches_counts_started_and_recent_arrivals_only() -> None:
    study = StudyFactory(max_open_batches=2, batch_time_limit_minutes=30, first_answer_grace_seconds=60)
    now = datetime.now(tz=UTC)

    def batch(state: str, **fields: object) -> Batch:
        person = ParticipantFactory(study=study)
        return Batch.objects.create(study=study, participant=person, number=1, token=f"t-{person.pk}", state=state,
                                    **fields)

    batch(Batch.State.ITEMS, expires_at=now + timedelta(minutes=5))
    batch(Batch.State.ITEMS, expires_at=now - timedelta(minutes=5))  # overdue: takes no room
    batch(Batch.State.CONSENT)  # arrived just now: takes room during the grace period
    assert open_batches_count(study=study, now=now) == 2
    assert open_batches_count(study=study, now=now, started_only=True) == 1
    with pytest.raises(ApplicationError) as error:
        check_room(study=study, now=now)
    assert error.value.code == "study_busy" and error.value.status == 409
    check_room(study=study, now=now, started_only=True)  # a start is checked against started batches only
    assert open_batches_count(study=study, now=now + timedelta(seconds=61)) == 1  # the arrival's grace is over


def test_the_platform_session_of_an_arrival() -> None:
    assert platform_session(platform="mturk", session_ref="x", assignment="A1") == ("assignment", "A1")
    assert platform_session(platform="prolific", session_ref="s-1", assignment="") == ("session_ref", "s-1")
    assert platform_session(platform="prolific", session_ref="", assignment="") == ("", "")
    assert platform_session(platform=Participant.Platform.ANONYMOUS, session_ref="s", assignment="") == ("", "")


def test_batches_open_from_one_address_are_capped_and_others_still_enter(settings) -> None:
    """A bot farm behind one address holds at most ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS open batches of a study
    (today's defaults let one address hold about 100); people elsewhere still enter, and nothing of the refused
    arrival is stored. The batch keeps a keyed pseudonym of the address, never the address."""
    from rest_framework.test import APIClient

    from tests.annotation.helpers import make_study

    settings.ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS = 5
    study = make_study(n_instances=12)
    farm, person = APIClient(REMOTE_ADDR="203.0.113.7"), APIClient(REMOTE_ADDR="198.51.100.20")
    url = f"/api/v1/studies/{study.slug}/sessions/"
    assert [farm.post(url, {"platform": "anonymous"}, format="json").status_code for _ in range(5)] == [201] * 5
    refused = farm.post(url, {"platform": "anonymous"}, format="json")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_open_from_address"
    assert int(refused.headers["Retry-After"]) > 0
    assert Participant.objects.filter(study=study).count() == Batch.objects.filter(study=study).count() == 5
    assert person.post(url, {"platform": "anonymous"}, format="json").status_code == 201
    keys = set(Batch.objects.values_list("opened_from", flat=True))
    assert len(keys) == 2 and all(key.startswith("ps-") and "203.0.113" not in key for key in keys)
    # A batch that ends (here: its arrival's grace is over) makes room again.
    Batch.objects.filter(opened_from=participation_key("203.0.113.7")).update(
        created_at=datetime.now(tz=UTC) - timedelta(hours=1))
    assert farm.post(url, {"platform": "anonymous"}, format="json").status_code == 201


def participation_key(address: str) -> str:
    from annotation.services.participation import address_key

    return address_key(address)


def test_the_cap_per_address_is_on_by_default_at_5() -> None:
    """The server's default (the test settings lift it for simulated crowds from 127.0.0.1): read from
    config/settings/base.py with the variable unset."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS"}
    out = subprocess.run([sys.executable, "-c", "import config.settings.base as b; "
                          "print(b.ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS)"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "5"
