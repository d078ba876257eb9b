"""python manage.py load_likert_demo [--slug likert-demo] [--items FILE.jsonl] [--ratings FILE.csv | --no-ratings]

Creates the Likert study the metric meta-evaluation demo runs on (see scoring/demo/)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands import JsonCommand
from scoring.metric_evaluation.demo import DEMO_ITEMS, DEMO_RATINGS, likert_demo_load


class Command(JsonCommand):
    help = "Load the Likert demo study (formality-transfer outputs of 4 made-up systems, illustrative ratings)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--slug", default="likert-demo")
        parser.add_argument("--items", default=str(DEMO_ITEMS))
        parser.add_argument("--ratings", default=str(DEMO_RATINGS), help="Long CSV: item, annotator, question, value.")
        parser.add_argument("--no-ratings", action="store_true", help="Only the items, to be rated on the platform.")

    def run(self, **options: Any) -> dict[str, Any]:
        return likert_demo_load(slug=options["slug"], items_path=Path(options["items"]),
                                ratings_path=None if options["no_ratings"] else Path(options["ratings"]))
