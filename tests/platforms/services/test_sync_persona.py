"""Platform sync reads a completed submission's demographics once for a study that takes persona attributes from
Prolific, and keeps only the study's named attributes (mapped to PASTEL's choices); DATA_EXPIRED, a 404 and a
failed read leave the attribute unset, and a later sync reads only for whoever still lacks it."""
from __future__ import annotations

import pytest

from annotation.models import Participant
from annotation.services.persona_platform import persona_questions_mark
from annotation.services.persona_questions import persona_questions_build
from platforms.models import PlatformStudy
from platforms.services.sync import platform_sync
from tests.platforms.conftest import hex_pid, on_prolific, paid_study

pytestmark = pytest.mark.django_db

SNAPSHOT = {"Age": "23", "Sex": "Female", "Country of residence": "United States", "Nationality": "Mexico",
            "Ethnicity simplified": "Mixed", "Employment status": "Part-Time", "Fluent languages": "English, Spanish"}


def _study_reading(attributes: list[str], asked: list[str]):  # noqa: ANN202
    study = paid_study()
    questions = persona_questions_mark(questions=persona_questions_build(attributes=[*asked, *attributes]),
                                       attributes=attributes, platform="prolific")
    type(study).objects.filter(pk=study.pk).update(eligibility_questions=questions)
    study.refresh_from_db()
    return study


def test_only_the_named_attributes_are_kept_and_expired_or_missing_ones_stay_unset(prolific_account, fake_prolific):
    study = _study_reading(["age", "country"], asked=["gender"])
    platform_study = on_prolific(study, prolific_account, fake_prolific)
    subs = {s["participant_id"]: s["id"] for s in fake_prolific.submissions.values()}
    fake_prolific.demographics[subs[hex_pid(1)]] = dict(SNAPSHOT)
    fake_prolific.demographics[subs[hex_pid(2)]] = {**SNAPSHOT, "Age": "DATA_EXPIRED"}
    # hex_pid(3): none archived (404)
    Participant.objects.filter(study=study, external_id=hex_pid(2)).update(persona={"gender": "male"})

    summary = platform_sync(platform_study=platform_study)
    assert summary["persona_attributes_read"] == 3
    personas = dict(Participant.objects.filter(study=study).values_list("external_id", "persona"))
    assert personas[hex_pid(1)] == {"age": "18-24", "country": "United States"}  # no sex, nationality, ethnicity, …
    assert personas[hex_pid(2)] == {"gender": "male", "country": "United States"}  # the asked answer kept, age unset
    assert personas[hex_pid(3)] == {}
    stored = str(list(PlatformStudy.objects.filter(pk=platform_study.pk).values())) + str(personas)
    for discarded in ("Mexico", "Part-Time", "Spanish", "Mixed", "Female"):
        assert discarded not in stored
    assert len(fake_prolific.calls_to("GET", r"/demographics/$")) == 3

    fake_prolific.demographics[subs[hex_pid(3)]] = {"Age": "60", "Country of residence": "Canada"}
    platform_sync(platform_study=platform_study)
    reads = [c.path for c in fake_prolific.calls_to("GET", r"/demographics/$")][3:]
    # Who holds every attribute is not read again; who lacks one (expired age) or all (404 before) is.
    assert sorted(reads) == sorted(f"/api/v1/submissions/{subs[hex_pid(n)]}/demographics/" for n in (2, 3))
    assert Participant.objects.get(study=study, external_id=hex_pid(3)).persona == {"age": "55-74",
                                                                                   "country": "Canada"}


def test_a_failed_read_changes_nothing_and_a_study_reading_nothing_reads_nothing(prolific_account, fake_prolific):
    study = _study_reading(["age"], asked=[])
    platform_study = on_prolific(study, prolific_account, fake_prolific)
    for sub in fake_prolific.submissions.values():
        fake_prolific.demographics[sub["id"]] = dict(SNAPSHOT)
    fake_prolific.fail("GET", r"/demographics/", "500", times=100)
    summary = platform_sync(platform_study=platform_study)
    assert summary["persona_attributes_read"] == 0 and summary["submissions"] == 3
    assert all(p == {} for p in Participant.objects.filter(study=study).values_list("persona", flat=True))
    fake_prolific.faults.clear()
    assert platform_sync(platform_study=platform_study)["persona_attributes_read"] == 3

    plain = paid_study(slug="plain")
    plain_study = on_prolific(plain, prolific_account, fake_prolific)
    before = len(fake_prolific.calls_to("GET", r"/demographics/$"))
    assert platform_sync(platform_study=plain_study)["persona_attributes_read"] == 0
    assert len(fake_prolific.calls_to("GET", r"/demographics/$")) == before
