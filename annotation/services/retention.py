"""Retention inside the annotation tables: what a study keeps of its participants once its retention period has
passed (the whole run, with the platform's tables and the ids, is platforms/services/retention.py).

Persona answers and eligibility answers are deleted, and so is telemetry detail (the counts and durations the page
measured while a rewrite was written); `telemetry_status` stays, as do the writing signals computed from it. Before
the persona answers go, their k-anonymous per-attribute counts are written to the study's
`selection["persona_aggregates"]`, which the dataset card reads: a value held by fewer than k people is merged into
"other" when the merged cell reaches k, and withheld (counted only) otherwise."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Batch, Participant, Response, Study

PERSONA_AGGREGATES = "persona_aggregates"  # the key in Study.selection the card reads
OTHER = "other"


def _cell_value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(sorted(str(v) for v in value))
    return str(value)


def persona_aggregates(*, study: Study, k: int | None = None) -> dict[str, Any]:
    """Per persona attribute, how many people gave each value, with every cell below k merged or withheld."""
    k = k or settings.STYLECROWD_K_ANONYMITY
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    people = 0
    for persona in Participant.objects.filter(study=study).exclude(persona={}).values_list("persona", flat=True):
        if not isinstance(persona, dict) or not persona:
            continue
        people += 1
        for name, value in persona.items():
            counts[str(name)][_cell_value(value)] += 1
    attributes: dict[str, Any] = {}
    withheld_people = 0
    for name in sorted(counts):
        kept = {value: n for value, n in sorted(counts[name].items()) if n >= k}
        small = sum(n for n in counts[name].values() if n < k)
        entry: dict[str, Any] = {"values": kept, "withheld": 0}
        if small >= k:
            entry["values"][OTHER] = entry["values"].get(OTHER, 0) + small
        else:
            entry["withheld"] = small
            withheld_people += small
        attributes[name] = entry
    return {"k": k, "people": people, "attributes": attributes, "withheld_cells_people": withheld_people}


def _retired(study: Study) -> dict[str, Any]:
    return {
        "participants": Participant.objects.filter(study=study),
        "persona": Participant.objects.filter(study=study).exclude(persona={}),
        "telemetry": Response.objects.filter(study=study, telemetry__isnull=False),
        "eligibility": Batch.objects.filter(study=study).exclude(eligibility_answers={}),
        "addresses": Batch.objects.filter(study=study).exclude(opened_from=""),
    }


def study_personal_data_retire(*, study: Study, apply: bool) -> dict[str, int]:
    """Delete a study's persona answers, eligibility answers, telemetry detail and the keyed pseudonyms of the
    addresses its batches were opened from (after keeping the persona's
    k-anonymous aggregates on the study). A dry run (`apply=False`) counts what would go and changes nothing.
    Idempotent: a second run finds nothing left to delete and keeps the aggregates written the first time."""
    rows = _retired(study)
    counts = {"persona_answers": rows["persona"].count(), "telemetry_details": rows["telemetry"].count(),
              "eligibility_answers": rows["eligibility"].count(), "address_keys": rows["addresses"].count()}
    if not apply:
        return counts
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if counts["persona_answers"] or PERSONA_AGGREGATES not in (locked.selection or {}):
            aggregates = {**persona_aggregates(study=locked), "computed_at": timezone.now().isoformat()}
            locked.selection = {**(locked.selection or {}), PERSONA_AGGREGATES: aggregates}
            locked.save(update_fields=["selection"])
            study.selection = locked.selection
        rows["persona"].update(persona={})
        rows["telemetry"].update(telemetry=None)
        rows["eligibility"].update(eligibility_answers={})
        rows["addresses"].update(opened_from="")
    return counts
