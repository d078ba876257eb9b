"""known_people counts each person of a platform once, across studies."""
from __future__ import annotations

import pytest

from platforms.services.lists import block_list_members, known_people
from tests.factories import ParticipantFactory, StudyFactory

pytestmark = pytest.mark.django_db


def test_people_are_counted_once_per_platform():
    ParticipantFactory(study=StudyFactory(), external_id="P1", platform="prolific")
    ParticipantFactory(study=StudyFactory(), external_id="P1", platform="prolific")
    ParticipantFactory(study=StudyFactory(), external_id="P2", platform="prolific")
    ParticipantFactory(study=StudyFactory(), external_id="W1", platform="mturk")
    assert known_people(platform="prolific") == 2 and known_people(platform="mturk") == 1
    assert block_list_members(platform="prolific") == set()
