"""The card's "Annotators' data" section: how people are named in the release (keyed pseudonyms, never platform
ids), whether per-annotator labels are published and where, and how persona values were made k-anonymous."""
from __future__ import annotations

from typing import Any

from annotation.models import Participant
from core.anonymity import k_anonymity_k, persona_k_anonymize
from scoring.export.card.context import CardContext


def study_personas_released(study: Any) -> tuple[dict[str, dict[str, int]], dict[str, Any]]:
    """Per attribute, how many people hold each released value (k-anonymous over the study's personas), and the
    counts of people generalised and withheld."""
    personas = dict(Participant.objects.filter(study=study).exclude(persona={}).values_list("pk", "persona"))
    result = persona_k_anonymize(personas=personas)
    per_attribute: dict[str, dict[str, int]] = {}
    for persona in result.released.values():
        for attribute, value in persona.items():
            counts = per_attribute.setdefault(attribute, {})
            counts[value] = counts.get(value, 0) + 1
    return ({a: dict(sorted(v.items())) for a, v in sorted(per_attribute.items())},
            result.summary() if personas else {})


def annotators_facts(ctx: CardContext) -> dict[str, Any]:
    personas = {s.slug: study_personas_released(s)[1] for s in ctx.studies}
    return {
        "identifiers": "Annotators are named by keyed pseudonyms (HMAC-SHA256 with a key that never leaves the "
                       "server); no platform id is part of the release"
                       + ("; the pseudonyms are salted for this release, so they do not match other releases'"
                          if ctx.params.get("salted") else "") + ".",
        "annotator_votes": ctx.annotator_votes or {"published": False, "reason": "not computed"},
        "k_anonymity": {"k": k_anonymity_k(), "studies": {slug: p for slug, p in personas.items() if p}},
    }


def annotators_markdown(facts: dict[str, Any]) -> list[str]:
    votes = facts["annotator_votes"]
    lines = [facts["identifiers"], ""]
    if votes.get("published"):
        lines.append(f"Per-annotator labels: published in `{votes['file']}` ({votes['rows']} valid votes by "
                     f"{votes['annotators']} annotators; {votes['pseudonyms']} pseudonyms; columns "
                     f"{', '.join(votes['columns'])}).")
    else:
        lines.append(f"Per-annotator labels are not published ({votes.get('reason', 'not computed')}).")
    if votes.get("not_published") and votes.get("published"):
        lines.append(f"Studies whose per-annotator labels are not published: {', '.join(votes['not_published'])}.")
    k = facts["k_anonymity"]
    lines += ["", f"Persona values (self-reported) are released only where every combination is held by at least "
                  f"k = {k['k']} people:"]
    if not k["studies"]:
        lines.append("no persona values were collected.")
    for slug, summary in k["studies"].items():
        lines.append(f"- `{slug}`: {summary['people']} people; {summary['generalised']} generalised, "
                     f"{summary['withheld']} withheld")
    return lines
