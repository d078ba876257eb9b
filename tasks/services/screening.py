"""Screening questions: importing private ones from a TSV in STEL's screening format, duplicating for editing.

STEL's published screening questions (`loaddata screening_questions`) have public answers: anyone can look them
up, so a paid study needs questions of its own. The TSV has STEL's header:
`style type, Correct Order, Anchor 1, Anchor 2, Alternative 1.1, Alternative 1.2` (Anchor 2 only shows in
quadruples), optionally followed by a `setups` column (comma-separated: quadruple, triple, style-or-content;
empty: every setup).
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from tasks.models import Order, ScreeningQuestion, Setup, StyleComponent
from tasks.stel.tsv import SCREENING_HEADER

HEADER = SCREENING_HEADER  # STEL's screening TSV (tasks.stel.tsv)
NAME_PREFIX = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")


LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


def _next_names(prefix: str, component: str, count: int, taken: set[str]) -> list[str]:
    names, n = [], 0
    while len(names) < count:
        n += 1
        name = f"{prefix}-{component}-{n}"
        if name not in taken:
            names.append(name)
            taken.add(name)
    return names


def _parsed_row(row: list[str], *, where: str, lineno: int, components: dict[str, StyleComponent]
                ) -> dict[str, Any]:
    """One TSV row as a question's fields, or the ApplicationError that names what is wrong with it."""
    if len(row) not in (6, 7):
        raise ApplicationError(f"{where}: line {lineno}: expected 6 or 7 tab-separated columns, got {len(row)}.")
    cells = [cell.strip() for cell in row]
    name, order, anchor_1, anchor_2, sentence_1, sentence_2 = cells[:6]
    if name not in components:
        raise ApplicationError(f"{where}: line {lineno}: unknown style type {name!r} (known: "
                               f"{', '.join(sorted(components))}).")
    if order not in Order.values:
        raise ApplicationError(f"{where}: line {lineno}: Correct Order must be S1-S2 or S2-S1, not {order!r}.")
    if not all((anchor_1, anchor_2, sentence_1, sentence_2)):
        raise ApplicationError(f"{where}: line {lineno}: every sentence (Anchor 1, Anchor 2, Alternative 1.1, "
                               "Alternative 1.2) is required.")
    if sentence_1 == sentence_2 or anchor_1 == anchor_2:
        raise ApplicationError(f"{where}: line {lineno}: the two anchors and the two alternatives must differ.")
    setups = [s.strip() for s in (cells[6] if len(cells) == 7 else "").split(",") if s.strip()]
    unknown = sorted(set(setups) - set(Setup.values))
    if unknown:
        raise ApplicationError(f"{where}: line {lineno}: unknown setup(s) {unknown} (known: {Setup.values}).")
    return {"component": components[name], "correct_order": order, "anchor_1": anchor_1, "anchor_2": anchor_2,
            "sentence_1": sentence_1, "sentence_2": sentence_2, "setups": setups}


def screening_questions_import(*, text: str, where: str, prefix: str = "private", source: str = "",
                               active: bool = True, language: str = "en") -> list[ScreeningQuestion]:
    """Create one screening question per TSV row, named `<prefix>-<component>-<n>`, in `language` (BCP 47: the
    studies in that language draw them); all rows or none."""
    if not NAME_PREFIX.match(prefix or ""):
        raise ApplicationError(f"prefix {prefix!r}: use lower-case letters, digits, '-' or '_' (at most 41).",
                               details={"prefix": [prefix]})
    language = (language or "").strip()
    if not LANGUAGE_TAG.match(language):
        raise ApplicationError(f"language {language!r}: give a BCP 47 tag such as fr or pt-BR.",
                               details={"language": [language]}, field="language")
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff")), delimiter="\t", quoting=csv.QUOTE_NONE))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise ApplicationError(f"{where}: empty file.")
    header = [cell.strip() for cell in rows[0]]
    if header[:6] != HEADER or header[6:] not in ([], ["setups"]):
        raise ApplicationError(f"{where}: line 1: expected the header {' | '.join(HEADER)} [| setups], got "
                               f"{' | '.join(header)[:200]}.")
    components = {c.name: c for c in StyleComponent.objects.all()}
    parsed = [_parsed_row(row, where=where, lineno=lineno, components=components)
              for lineno, row in enumerate(rows[1:], start=2)]
    if not parsed:
        raise ApplicationError(f"{where}: no questions below the header.")
    with transaction.atomic():
        taken = set(ScreeningQuestion.objects.filter(name__startswith=f"{prefix}-").values_list("name", flat=True))
        created = []
        for row in parsed:
            (name,) = _next_names(prefix, row["component"].name, 1, taken)
            created.append(ScreeningQuestion.objects.create(
                name=name, active=active, source=source or f"imported from {where}"[:200], language=language, **row,
            ))
    return created


def screening_questions_duplicate(*, questions: QuerySet[ScreeningQuestion], prefix: str = "private"
                                  ) -> list[ScreeningQuestion]:
    """Inactive copies to edit into private questions (a copy of a published question is still public until its
    texts are changed, so the copies start inactive)."""
    with transaction.atomic():
        taken = set(ScreeningQuestion.objects.values_list("name", flat=True))
        copies = []
        for question in questions.select_related("component").order_by("name"):
            (name,) = _next_names(prefix, question.component.name, 1, taken)
            copies.append(ScreeningQuestion.objects.create(
                name=name, component=question.component, anchor_1=question.anchor_1, anchor_2=question.anchor_2,
                sentence_1=question.sentence_1, sentence_2=question.sentence_2,
                correct_order=question.correct_order, setups=list(question.setups), active=False,
                language=question.language,
                source=f"copy of {question.name}: edit the texts, then activate"[:200],
            ))
    return copies


PUBLISHED_FIXTURE = "screening_questions"  # fixtures/screening_questions.json: STEL's published questions


def screening_questions_load_published() -> dict[str, Any]:
    """Load STEL's published screening questions, the data `loaddata screening_questions` loads, matched by name
    (never by primary key, so no question of one's own is overwritten); components they need are created, and a
    component or question that exists is left as it is (a researcher may have switched one off). Idempotent."""


    path = next((d / f"{PUBLISHED_FIXTURE}.json" for d in map(_as_path, settings.FIXTURE_DIRS)
                 if (d / f"{PUBLISHED_FIXTURE}.json").exists()), None)
    if path is None:
        raise ApplicationError(f"STEL's screening questions ({PUBLISHED_FIXTURE}.json) are not in the fixture folders "
                               f"of this install.", code=NOT_FOUND, status=404)
    records = json.loads(path.read_text(encoding="utf-8"))
    created: list[str] = []
    with transaction.atomic():
        for record in records:
            if record["model"] == "tasks.stylecomponent":
                StyleComponent.objects.get_or_create(name=record["fields"]["name"], defaults=record["fields"])
        for record in records:
            if record["model"] != "tasks.screeningquestion":
                continue
            fields = dict(record["fields"])
            component = StyleComponent.objects.filter(name=fields.pop("component")[0]).first()
            if component is None:
                continue  # a component this install does not have: its question cannot be asked
            _, made = ScreeningQuestion.objects.get_or_create(name=fields.pop("name"),
                                                              defaults={**fields, "component": component})
            if made:
                created.append(record["fields"]["name"])
    total = ScreeningQuestion.objects.filter(name__in=[r["fields"]["name"] for r in records
                                                       if r["model"] == "tasks.screeningquestion"]).count()
    return {"created": created, "published": total}


def _as_path(folder: Any) -> Any:
    return Path(folder)
