"""python manage.py review_rewrites --study SLUG (--accept-all | --auto [--min-overlap 60]) [--reviewer USERNAME]

Decides a rewrite study's pending rewrites without the admin queue (the demo, scripted pipelines), through the review
service (`annotation.services.review.reviews_decide_pending`, which calls `review_decide` as the queue does):
rejected rewrites reopen their slots. --auto rejects a rewrite that keeps too little of its source's words
(`rewrite_keeps_meaning`: rapidfuzz token_sort_ratio below --min-overlap) as "meaning changed" and accepts the rest;
a person still reviews in the queue for real studies."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from annotation.models import Study
from annotation.services.review import AUTO_REVIEW_MIN_OVERLAP, reviews_decide_pending
from core.commands import JsonCommand
from core.errors import ApplicationError


class Command(JsonCommand):
    help = "Accept (or auto-review) the pending rewrites of a rewrite study through the review service."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--accept-all", action="store_true", help="Accept every pending rewrite.")
        mode.add_argument("--auto", action="store_true",
                          help="Reject rewrites keeping too little of the source ('meaning changed'), accept the rest.")
        parser.add_argument("--min-overlap", type=float, default=AUTO_REVIEW_MIN_OVERLAP,
                            help="--auto: least rapidfuzz token_sort_ratio (0-100) of rewrite and source to accept.")
        parser.add_argument("--reviewer", default="", help="Username recorded as the reviewer (default: none).")

    def run(self, **options: Any) -> dict[str, Any]:
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise ApplicationError(f"--study: no study with slug {options['study']!r}.")
        reviewer = None
        if options["reviewer"]:
            reviewer = get_user_model().objects.filter(username=options["reviewer"]).first()
            if reviewer is None:
                raise ApplicationError(f"--reviewer: no user {options['reviewer']!r}.")
        with self.progress_bar("rewrites") as progress:
            counts = reviews_decide_pending(study=study, auto=options["auto"], min_overlap=options["min_overlap"],
                                            reviewer=reviewer, progress=progress)
        return {"study": study.slug, **counts}
