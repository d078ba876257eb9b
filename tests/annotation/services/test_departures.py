"""participant_departed: an unknown participant is a no-op; a known one with nothing open is excluded once."""
from __future__ import annotations

import pytest

from annotation.services.departures import participant_departed
from tests.factories import ParticipantFactory, StudyFactory

pytestmark = pytest.mark.django_db


def test_an_unknown_participant_changes_nothing():
    study = StudyFactory()
    result = participant_departed(study=study, platform="prolific", external_id="nobody", withdrawn=True, reason="x")
    assert result == {"participant": None, "batches_ended": 0, "slots_released": 0, "excluded": False}


def test_a_withdrawn_participant_is_excluded_once():
    person = ParticipantFactory()
    first = participant_departed(study=person.study, platform=person.platform, external_id=person.external_id,
                                 withdrawn=True, reason="returned")
    person.refresh_from_db()
    assert first["excluded"] is True and first["batches_ended"] == 0 and person.excluded
    again = participant_departed(study=person.study, platform=person.platform, external_id=person.external_id,
                                 withdrawn=True, reason="returned")
    assert again["excluded"] is False
