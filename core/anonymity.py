"""k-anonymity of persona values: what may be released about people's self-reported attributes.

A released persona (the attributes a person gave, or a coarser form of them) is k-anonymous when every combination
of released attribute values is held by at least k people, so that nobody can be picked out of a small cell by
someone who knows a few facts about them. Where a combination is rarer than that, values are generalised first (a
value held by fewer than k people becomes "other"), then whole attributes are left out for everyone where that
loses fewer released values than withholding the people in small cells would, and the people still in a small cell
are withheld (nothing released about them). Every release path of persona values (corpora built from rewrites, the
dataset card) goes through `persona_k_anonymize`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

OTHER = "other"

Persona = dict[str, str]
Combination = tuple[tuple[str, str], ...]


def k_anonymity_k() -> int:
    """The k of released persona values (STYLECROWD_K_ANONYMITY, default 5); never below 1."""
    return max(1, int(getattr(settings, "STYLECROWD_K_ANONYMITY", 5) or 5))


@dataclass
class KAnonymousPersonas:
    k: int
    released: dict[Hashable, Persona]  # per person: the values that may be released ({} = withheld)
    generalised: int = 0  # people released coarser than they answered ("other", an attribute left out)
    withheld: int = 0  # people of whom no persona value is released
    dropped_attributes: list[str] = field(default_factory=list)  # attributes left out for everyone

    def summary(self) -> dict[str, Any]:
        return {"k": self.k, "people": len(self.released), "generalised": self.generalised,
                "withheld": self.withheld, "dropped_attributes": list(self.dropped_attributes)}


def _combination(persona: Mapping[str, str]) -> Combination:
    return tuple(sorted(persona.items()))


def _people_in_small_cells(personas: Mapping[Hashable, Persona], k: int) -> set[Hashable]:
    counts = Counter(_combination(p) for p in personas.values() if p)
    return {person for person, p in personas.items() if p and counts[_combination(p)] < k}


def _generalise_rare_values(personas: dict[Hashable, Persona], k: int) -> None:
    per_attribute: dict[str, Counter[str]] = {}
    for persona in personas.values():
        for attribute, value in persona.items():
            per_attribute.setdefault(attribute, Counter())[value] += 1
    for persona in personas.values():
        for attribute, value in persona.items():
            if per_attribute[attribute][value] < k:
                persona[attribute] = OTHER


def _without(personas: Mapping[Hashable, Persona], attribute: str) -> dict[Hashable, Persona]:
    return {person: {a: v for a, v in p.items() if a != attribute} for person, p in personas.items()}


def persona_k_anonymize(*, personas: Mapping[Hashable, Mapping[str, Any]], k: int | None = None) -> KAnonymousPersonas:
    """Released persona values per person such that every released combination is held by >= k people.

    `personas` maps a person (any key: a pseudonym, a participant id) to their answers; values are compared as text,
    empty answers are not values. The result keeps every person's key; a withheld person's persona is {}."""
    k = k_anonymity_k() if k is None else max(1, int(k))
    original: dict[Hashable, Persona] = {
        person: {str(a): str(v) for a, v in (persona or {}).items() if v is not None and str(v) != ""}
        for person, persona in personas.items()
    }
    released = {person: dict(p) for person, p in original.items()}
    _generalise_rare_values(released, k)
    dropped: list[str] = []
    small = _people_in_small_cells(released, k)
    while small:
        attributes = sorted({a for p in released.values() for a in p})
        if len(attributes) <= 1:
            break
        # Values lost by withholding the people in small cells now, against leaving one attribute out for everyone
        # (and withholding whoever is still in a small cell then): the cheaper way wins, ties go to withholding.
        loss_now = sum(len(released[person]) for person in small)
        trials = {a: _people_in_small_cells(_without(released, a), k) for a in attributes}
        loss = {a: sum(1 for person, p in released.items() if a in p and person not in trials[a])
                + sum(len(released[person]) for person in trials[a]) for a in attributes}
        best = min(attributes, key=lambda a: (loss[a], a))
        if loss[best] >= loss_now:
            break
        released, small = _without(released, best), trials[best]
        dropped.append(best)
    for person in small:
        released[person] = {}
    withheld = sum(1 for person, p in original.items() if p and not released[person])
    generalised = sum(1 for person, p in original.items() if released[person] and released[person] != p)
    return KAnonymousPersonas(k=k, released=released, generalised=generalised, withheld=withheld,
                              dropped_attributes=dropped)
