"""python manage.py writing_signals --study SLUG [--signal-threshold NAME=VALUE ...] [--auto-reject SIGNAL,… | none]
[--language-model DIR] [--near-duplicate chars|embedding] [--embedding-model DIR]
[--rewrite-model-url URL --rewrite-model NAME [--api-key-env NAME]] [--background]

Measures the writing signals of a rewrite study's rewrites (README, "Writing telemetry and signals") and applies the
study's auto-reject rule, through the review service the queue and the API use. Thresholds and the rule given here
are saved on the study first."""
from __future__ import annotations

from typing import Any

from annotation.services.writing_signals.jobs import (
    rewrite_study_get,
    signal_settings_update,
    writing_signals_options,
    writing_signals_run,
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
        parser.add_argument("--rewrite-model-url", metavar="URL",
                            help="An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) whose model rewrites "
                                 "each source as the writers were asked to: switches on model_similarity.")
        parser.add_argument("--rewrite-model", metavar="NAME", help="The model the endpoint serves.")
        parser.add_argument("--api-key-env", metavar="NAME",
                            help="The environment variable holding the endpoint's key (default OPENAI_API_KEY; "
                                 "read when the requests are made, never stored).")
        parser.add_argument("--background", action="store_true", help="Queue it as a job (Celery) and return.")

    def run(self, **options: Any) -> dict[str, Any]:
        thresholds = thresholds_parse(options["signal_threshold"])
        rule = options["auto_reject"]
        rule = [] if rule is not None and rule.strip().lower() == "none" else rule
        models = {"language_model": options["language_model"], "near_duplicate_method": options["near_duplicate"],
                  "embedding_model": options["embedding_model"], "rewrite_model_url": options["rewrite_model_url"],
                  "rewrite_model": options["rewrite_model"], "api_key_env": options["api_key_env"]}
        if options["background"]:
            job = writing_signals_start(study_slug=options["study"], thresholds=thresholds, auto_reject=rule,
                                        created_by="cli", **models)
            return {"study": options["study"], "job": job.pk, "status": job.status}
        study = rewrite_study_get(options["study"])
        checked = writing_signals_options(check_paths=False, **models)
        signal_settings_update(study=study, thresholds=thresholds, auto_reject=rule)
        with self.progress_bar("rewrites (models)") as progress:
            return writing_signals_run(study=study, options={**checked, "near_duplicate_method":
                                                             options["near_duplicate"]}, progress=progress)
