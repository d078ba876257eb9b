"""Loads the metric meta-evaluation demo: a Likert study of made-up formality-transfer outputs of four made-up
systems (scoring/demo/likert_demo_items.jsonl) with illustrative ratings (likert_demo_ratings.csv).

A thin demo of the ratings door (`import_annotations --items`, `scoring.agreement.rating_imports`): the items and
the long ratings file go through `ratings_import` as a researcher's own would, so any question name the ratings
file uses is taken (the Pauli preset's `style_strength` as well as `style_change`). Without ratings the items make
a study to be rated on the platform (mind-the-style-gap's questions).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.models import ItemKind, Study
from annotation.services.studies import QUESTION_PRESETS, items_read_jsonl, study_create
from annotation.services.study_settings import study_settings_build
from scoring.agreement.rating_imports import RatingsImport, ratings_import

DEMO_DIR = Path(settings.BASE_DIR) / "scoring" / "demo"
DEMO_ITEMS = DEMO_DIR / "likert_demo_items.jsonl"
DEMO_RATINGS = DEMO_DIR / "likert_demo_ratings.csv"
QUESTIONS = QUESTION_PRESETS["mind-the-style-gap"]
TITLE = "Metric meta-evaluation demo (formality)"


def likert_demo_load(*, slug: str = "likert-demo", items_path: Path = DEMO_ITEMS,
                     ratings_path: Path | None = DEMO_RATINGS) -> dict[str, Any]:
    """The demo study: imported with its ratings through the ratings door, or (no ratings) open to be rated."""
    if ratings_path is None:
        items = items_read_jsonl(path=Path(items_path), kind=ItemKind.LIKERT)
        study = study_create(slug=slug, item_kind=ItemKind.LIKERT, items=items, questions=QUESTIONS,
                             settings=study_settings_build(title=TITLE, annotators_per_item=3, min_correct=2))
        return {"study": study.slug, "items": len(items), "participants": 0, "responses": 0,
                "questions": [q["name"] for q in QUESTIONS]}
    with transaction.atomic():
        summary = ratings_import(request=RatingsImport(
            study_slug=slug, scale="1-5", level="ordinal", ratings_path=Path(ratings_path),
            items_path=Path(items_path), language="en"))
        Study.objects.filter(slug=slug).update(title=TITLE)
    return {"study": summary["study"], "items": summary["items"], "participants": summary["annotators_created"],
            "responses": summary["responses"], "questions": summary["questions"]}
