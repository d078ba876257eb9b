"""python manage.py writing_signals --study SLUG [--signal-threshold NAME=VALUE ...] [--auto-reject SIGNAL,… | none]
[--language-model DIR] [--near-duplicate chars|embedding] [--embedding-model DIR] [--background]

Measures the writing signals of a rewrite study's rewrites (README, "Writing telemetry and signals") and applies the
study's auto-reject rule, through the review service the queue and the API use. Thresholds and the rule given here
are saved on the study first."""
from __future__ import annotations

from typing import Any

from annotation.services.review import review_autoflag
from annotation.services.writing_signals.jobs import (
    rewrite_study_get,
    signal_settings_update,
    writing_signals_options,
    writing_signals_start,
)
from annotation.services.writing_signals.registry import thresholds_parse
from core.commands import JsonCommand


class Command(JsonCommand):
    help = "Measure a rewrite study's writing signals (flags for review) and apply its auto-reject rule."
    cli_fields = {"signal_thresholds": "signal_threshold", "signal_auto_reject": "auto_reject",
                  "near_duplicate_method": "near_duplicate"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", required=True)
        parser.add_argument("--signal-threshold", action="append", default=[], metavar="NAME=VALUE",
                            help="A signal's threshold (VALUE off switches it off), or focus_loss_insert_chars; "
                                 "repeat for several. Saved on the study.")
        parser.add_argument("--auto-reject", default=None, metavar="SIGNAL,…|none",
                            help="Signals whose flag rejects a pending rewrite without a reviewer; none clears it.")
        parser.add_argument("--language-model", help="Local causal LM directory for LLM-likeness "
                                                     "(default: STYLECROWD_WRITING_LM; neither: off).")
        parser.add_argument("--near-duplicate", default="chars", choices=["chars", "embedding"],
                            help="chars: rapidfuzz character similarity; embedding: cosine of a local model's.")
        parser.add_argument("--embedding-model", help="Local sentence-transformers directory (--near-duplicate "
                                                      "embedding).")
        parser.add_argument("--background", action="store_true", help="Queue it as a job (Celery) and return.")

    def run(self, **options: Any) -> dict[str, Any]:
        thresholds = thresholds_parse(options["signal_threshold"])
        rule = options["auto_reject"]
        rule = [] if rule is not None and rule.strip().lower() == "none" else rule
        if options["background"]:
            job = writing_signals_start(study_slug=options["study"], thresholds=thresholds, auto_reject=rule,
                                        language_model=options["language_model"],
                                        near_duplicate_method=options["near_duplicate"],
                                        embedding_model=options["embedding_model"], created_by="cli")
            return {"study": options["study"], "job": job.pk, "status": job.status}
        study = rewrite_study_get(options["study"])
        paths = writing_signals_options(language_model=options["language_model"],
                                        near_duplicate_method=options["near_duplicate"],
                                        embedding_model=options["embedding_model"], check_paths=False)
        signal_settings_update(study=study, thresholds=thresholds, auto_reject=rule)
        with self.progress_bar("rewrites (language model)") as progress:
            return review_autoflag(study=study, language_model=paths["language_model"],
                                   near_duplicate_method=options["near_duplicate"],
                                   embedding_model=paths["embedding_model"], progress=progress)
