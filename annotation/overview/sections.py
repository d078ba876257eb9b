"""The parts of a study's overview page that the apps above `annotation` add (annotation never imports them): each
registers a section, a function of the study and the user returning an `OverviewPart` — its next-step buttons, its
money rows, extra participant counts and the warnings that need a person. `platforms` adds publish, sync, decisions,
bonuses and the money; `scoring` adds agreement, filter, export and score. Steps are shown in `PIPELINE` order."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The study's steps in the order a researcher takes them; a registered step names one of these keys.
PIPELINE = ("preview", "open", "publish", "sync", "decisions", "bonuses", "agreement", "filter", "export", "score")


@dataclass(frozen=True)
class Step:
    """One button: a link (GET) or a form (POST, with the CSRF token) to the admin page that does the step."""

    key: str
    label: str
    url: str
    method: str = "get"
    done: bool = False
    available: bool = True
    optional: bool = False  # never "the next step" by itself (publishing an open-link study)
    note: str = ""


@dataclass(frozen=True)
class Notice:
    """A warning that needs a person, with where it is resolved."""

    text: str
    url: str = ""
    link: str = ""


@dataclass(frozen=True)
class Figure:
    """One row of the money table; `warning` set: shown beside the value, in the page's warnings too."""

    label: str
    value: str
    warning: str = ""


@dataclass
class OverviewPart:
    steps: list[Step] = field(default_factory=list)
    money: list[Figure] = field(default_factory=list)
    people: list[tuple[str, int]] = field(default_factory=list)  # (label, count) beside the participants' bars
    warnings: list[Notice] = field(default_factory=list)


OVERVIEW_SECTIONS: dict[str, Callable[..., OverviewPart]] = {}


def overview_section_register(name: str, section: Callable[..., OverviewPart]) -> None:
    """Add a section to every study's overview: `section(study=…, user=…)` returns its `OverviewPart` with a bounded
    number of queries (the page's query count is pinned by its tests)."""
    OVERVIEW_SECTIONS[name] = section


def overview_parts(*, study: Any, user: Any) -> OverviewPart:
    """Every registered section's part merged: steps in pipeline order, money and warnings in registration order."""
    merged = OverviewPart()
    for section in OVERVIEW_SECTIONS.values():
        part = section(study=study, user=user)
        merged.steps += part.steps
        merged.money += part.money
        merged.people += part.people
        merged.warnings += part.warnings
    merged.steps.sort(key=lambda step: PIPELINE.index(step.key) if step.key in PIPELINE else len(PIPELINE))
    return merged


def next_step(steps: list[Step]) -> Step | None:
    """The first step in pipeline order that is possible now and not done yet (optional steps are never chosen)."""
    return next((s for s in steps if s.available and not s.done and not s.optional), None)
