"""Loads the metric meta-evaluation demo: a Likert study of made-up formality-transfer outputs of four made-up
systems (scoring/demo/likert_demo_items.jsonl) with illustrative ratings (likert_demo_ratings.csv)."""
from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import ItemKind, Participant, Response, StudyItem
from annotation.services.studies import QUESTION_PRESETS, items_read_jsonl, study_create
from annotation.services.study_settings import study_settings_build
from core.errors import ApplicationError
from tasks.error_codes import FILE_NOT_FOUND

DEMO_DIR = Path(settings.BASE_DIR) / "scoring" / "demo"
DEMO_ITEMS = DEMO_DIR / "likert_demo_items.jsonl"
DEMO_RATINGS = DEMO_DIR / "likert_demo_ratings.csv"
QUESTIONS = QUESTION_PRESETS["mind-the-style-gap"]


def _read_ratings(path: Path, *, item_ids: set[str], questions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    if not path.exists():
        raise ApplicationError(f"Ratings: file {path} not found", code=FILE_NOT_FOUND, field="ratings")
    rows = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"item", "annotator", "question", "value"} - set(reader.fieldnames or [])
        if missing:
            raise ApplicationError(f"{path}: line 1: missing column(s) {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            if row["item"] not in item_ids:
                raise ApplicationError(f"{path}: line {line}: unknown item {row['item']!r}")
            question = questions.get(row["question"])
            if question is None:
                raise ApplicationError(f"{path}: line {line}: unknown question {row['question']!r}")
            try:
                value = float(row["value"])
            except ValueError:
                raise ApplicationError(f"{path}: line {line}: value {row['value']!r} is not a number") from None
            if not question["min"] <= value <= question["max"]:
                raise ApplicationError(f"{path}: line {line}: value {value:g} outside {question['min']}-"
                                       f"{question['max']}")
            rows.append({"item": row["item"], "annotator": row["annotator"].strip(), "question": row["question"],
                         "value": value, "line": line})
    return rows


def likert_demo_load(*, slug: str = "likert-demo", items_path: Path = DEMO_ITEMS,
                     ratings_path: Path | None = DEMO_RATINGS) -> dict[str, Any]:
    """Create the Likert study and, when a ratings file is given, its (imported) participants and responses."""
    items = items_read_jsonl(path=Path(items_path), kind=ItemKind.LIKERT)
    ratings = (
        _read_ratings(Path(ratings_path), item_ids={str(i["id"]) for i in items},
                      questions={q["name"]: q for q in QUESTIONS})
        if ratings_path else []
    )
    with transaction.atomic():
        study = study_create(
            slug=slug, item_kind=ItemKind.LIKERT, items=items, questions=QUESTIONS,
            settings=study_settings_build(
                title="Metric meta-evaluation demo (formality)", annotators_per_item=3, min_correct=2,
            ),
        )
        by_id = {i.external_id: i for i in StudyItem.objects.filter(study=study)}
        people = {name: Participant.objects.create(study=study, platform=Participant.Platform.IMPORTED,
                                                   external_id=name)
                  for name in dict.fromkeys(r["annotator"] for r in ratings)}
        base = timezone.now()
        Response.objects.bulk_create([
            Response(study=study, participant=people[r["annotator"]], study_item=by_id[r["item"]],
                     question=r["question"], answer=f"{r['value']:g}", value=r["value"],
                     answered_at=base + timedelta(microseconds=n), shown={"imported_from": str(ratings_path),
                                                                         "line": r["line"]})
            for n, r in enumerate(ratings)
        ])
    return {"study": study.slug, "items": len(items), "participants": len(people), "responses": len(ratings),
            "questions": [q["name"] for q in QUESTIONS]}
