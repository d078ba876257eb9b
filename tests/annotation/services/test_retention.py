"""study_personal_data_retire and persona_aggregates: persona answers, eligibility answers and telemetry detail go,
the persona's k-anonymous counts stay on the study; a dry run changes nothing."""
from __future__ import annotations

import pytest

from annotation.models import Batch, Participant, Response, Study, TelemetryStatus
from annotation.services.retention import PERSONA_AGGREGATES, persona_aggregates, study_personal_data_retire
from tests import factories as f

pytestmark = pytest.mark.django_db


def study_with_personas(ages: list[str]) -> Study:
    study = f.StudyFactory(status=Study.Status.CLOSED)
    item = f.StudyItemFactory(study=study)
    for n, age in enumerate(ages):
        person = f.ParticipantFactory(study=study, persona={"age": age, "langs": ["en", "fr"] if n % 2 else ["en"]})
        f.ResponseFactory(study=study, study_item=item, participant=person, telemetry={"keys": 10 + n},
                          telemetry_status=TelemetryStatus.CONSISTENT)
        Batch.objects.create(study=study, participant=person, number=1, token=f"tok-{study.pk}-{n}",
                             eligibility_answers={"native": "yes"})
    f.ParticipantFactory(study=study)  # no persona: not counted
    return study


def test_cells_below_k_are_merged_when_the_merged_cell_reaches_k_and_withheld_otherwise():
    study = study_with_personas(["18-24"] * 3 + ["25-34", "35-44", "45-54"] + ["65+"])
    aggregates = persona_aggregates(study=study, k=3)
    assert aggregates["people"] == 7 and aggregates["k"] == 3
    # 18-24 (3) kept; the four singletons sum to 4 >= k: merged into "other".
    assert aggregates["attributes"]["age"] == {"values": {"18-24": 3, "other": 4}, "withheld": 0}
    # list answers are one cell per combination: "en" ×4, "en, fr" ×3.
    assert aggregates["attributes"]["langs"] == {"values": {"en": 4, "en, fr": 3}, "withheld": 0}
    small = persona_aggregates(study=study_with_personas(["18-24"] * 3 + ["25-34"]), k=3)
    assert small["attributes"]["age"] == {"values": {"18-24": 3}, "withheld": 1}
    assert small["withheld_cells_people"] >= 1


def test_a_dry_run_counts_and_changes_nothing():
    study = study_with_personas(["18-24"] * 5)
    counts = study_personal_data_retire(study=study, apply=False)
    assert counts == {"persona_answers": 5, "telemetry_details": 5, "eligibility_answers": 5, "address_keys": 0}
    assert Participant.objects.filter(study=study).exclude(persona={}).count() == 5
    study.refresh_from_db()
    assert PERSONA_AGGREGATES not in study.selection


def test_apply_deletes_the_details_and_keeps_the_aggregates_and_the_answers(settings):
    settings.STYLECROWD_K_ANONYMITY = 5
    study = study_with_personas(["18-24"] * 5 + ["25-34"])
    Batch.objects.filter(study=study).update(opened_from="ps-0123456789abcdef0123")  # the per-address cap's key
    assert study_personal_data_retire(study=study, apply=True)["address_keys"] == 6
    assert not Batch.objects.filter(study=study).exclude(opened_from="").exists()
    assert not Participant.objects.filter(study=study).exclude(persona={}).exists()
    assert not Batch.objects.filter(study=study).exclude(eligibility_answers={}).exists()
    assert not Response.objects.filter(study=study, telemetry__isnull=False).exists()
    assert set(Response.objects.filter(study=study).values_list("telemetry_status", flat=True)) == {"consistent"}
    study.refresh_from_db()
    kept = study.selection[PERSONA_AGGREGATES]
    assert kept["attributes"]["age"] == {"values": {"18-24": 5}, "withheld": 1}
    # A second run finds nothing to delete and keeps the aggregates of the first.
    assert study_personal_data_retire(study=study, apply=True) == {
        "persona_answers": 0, "telemetry_details": 0, "eligibility_answers": 0, "address_keys": 0}
    study.refresh_from_db()
    assert study.selection[PERSONA_AGGREGATES] == kept
