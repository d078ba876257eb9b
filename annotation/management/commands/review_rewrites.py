"""python manage.py review_rewrites --study SLUG (--accept-all | --auto [--min-overlap 60]) [--reviewer USERNAME]

Decides a rewrite study's pending rewrites without the admin queue (the demo, scripted pipelines), through the same
review service the queue calls (`annotation.services.review.review_decide`): rejected rewrites reopen their slots.
--auto rejects a rewrite that keeps too little of its source's words (rapidfuzz token_sort_ratio below
--min-overlap) as "meaning changed" and accepts the rest; a person still reviews in the queue for real studies."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rapidfuzz import fuzz

from annotation.models import Study
from annotation.models_review import RejectionReason
from annotation.services.review import review_decide, review_queue
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
        parser.add_argument("--min-overlap", type=float, default=60.0,
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
        if not 0 <= options["min_overlap"] <= 100:
            raise ApplicationError(f"--min-overlap must be within 0…100, not {options['min_overlap']}.")
        counts = {"accepted": 0, "rejected": 0}
        rows = review_queue(study=study, limit=100_000)
        with self.progress_bar("rewrites") as progress:
            for done, row in enumerate(rows, start=1):
                keep = fuzz.token_sort_ratio(row["source"].lower(), row["rewrite"].lower())
                if options["auto"] and keep < options["min_overlap"]:
                    review_decide(response_id=row["response"], decision="reject", reviewer=reviewer,
                                  reason=RejectionReason.MEANING)
                    counts["rejected"] += 1
                else:
                    review_decide(response_id=row["response"], decision="accept", reviewer=reviewer)
                    counts["accepted"] += 1
                progress(done, len(rows))
        return {"study": study.slug, "reviewed": len(rows), **counts}
