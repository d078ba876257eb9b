"""python manage.py create_study --slug S --setup quadruple [--component formality] [--count 100 --seed 1] …"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.management.rewrite_options import rewrite_arguments_add, rewrite_study_from_options
from annotation.models import ORDERING_KINDS, EntryPlatform, ItemKind
from annotation.selectors import study_progress
from annotation.services.practice import practice_items_set
from annotation.services.rating_presets import (
    rating_items_from_rewrite_study,
    rating_items_read,
    rating_preset_get,
)
from annotation.services.sampling_plan import sampling_plan_compute
from annotation.services.studies import items_read_jsonl, questions_load, study_create
from core.commands import JsonCommand, json_file_read
from core.errors import ApplicationError


class Command(JsonCommand):
    help = "Create a study from task instances (ordering kinds) or an items file (likert, ranking, rewrite)."
    cli_fields = {"item_kind": "kind", "time_limit_minutes": "time_limit", "target_hourly_pay": "hourly_pay",
                  "signal_thresholds": "signal_threshold", "signal_auto_reject": "auto_reject"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--slug", required=True)
        parser.add_argument("--title", default="")
        parser.add_argument("--kind", choices=ItemKind.values, help="Item kind; defaults to --setup.")
        parser.add_argument("--setup", choices=[k.value for k in ORDERING_KINDS])
        parser.add_argument("--component", action="append", help="Style component name (repeatable).")
        parser.add_argument("--corpus", action="append", help="Corpus name (repeatable).")
        parser.add_argument("--status", default="candidate", help="Instance status (candidate, validated, any).")
        parser.add_argument("--count", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--annotators-per-item", type=int, default=None,
                            help="k distinct people per item (default: the --preset's, else 5).")
        parser.add_argument("--min-correct", type=int, help="m of k correct to validate (default: a majority).")
        parser.add_argument("--items-per-batch", type=int, default=14)
        parser.add_argument("--screening-per-batch", type=int, default=2)
        parser.add_argument("--max-batches", type=int, default=5)
        parser.add_argument("--time-limit", type=int, default=30, help="Batch time limit in minutes.")
        parser.add_argument("--adaptive", action="store_true", help="Adaptive collection (stop decided items).")
        parser.add_argument("--allow-multiple-setups", action="store_true")
        parser.add_argument("--items", help="JSONL items file for likert/ranking/rewrite studies.")
        parser.add_argument("--questions",
                            help="Likert questions: preset (mind-the-style-gap, gyafc, pauli) or JSON file.")
        parser.add_argument("--eligibility", help="JSON file with eligibility questions ('none' for no questions).")
        parser.add_argument("--consent-text")
        parser.add_argument("--task-description")
        parser.add_argument("--completion-code", default="")
        parser.add_argument("--screened-out-code", default="")
        parser.add_argument("--redirect-url", default="",
                            help="http(s) URL a finished participant is sent to; {code} is replaced by the code")
        parser.add_argument("--estimated-minutes", type=int, default=10)
        parser.add_argument("--hourly-pay", type=float, default=9.0)
        parser.add_argument("--rewrite-min-length", type=int, default=10)
        parser.add_argument("--platform", choices=EntryPlatform.values, default=EntryPlatform.ANY,
                            help="Accept only this platform's links and check their parameters (default: any).")
        parser.add_argument("--prolific-study-id", default="", help="Prolific STUDY_ID that links must carry.")
        parser.add_argument("--allow-anonymous", action=argparse.BooleanOptionalAction, default=None,
                            help="Accept links without a platform id (default: only for --platform any).")
        parser.add_argument("--first-answer-grace", type=int, dest="first_answer_grace_seconds",
                            help="Seconds a started batch has for its first answer before its items go back "
                                 "(default: settings.ANNOTATION_FIRST_ANSWER_GRACE_SECONDS).")
        parser.add_argument("--max-open-batches", type=int, help="Cap on batches open at once (default: none).")
        parser.add_argument("--min-seconds-per-item", type=float,
                            help="Flag participants whose median server-measured seconds per item is lower.")
        parser.add_argument("--practice", metavar="FILE.json",
                            help="Practice items shown with feedback before the first batch (a JSON list of "
                                 "{anchor_1, anchor_2, sentence_1, sentence_2, correct_answer, explanation}); "
                                 "never counted as answers, shown once per participant.")
        parser.add_argument("--target-validated", type=int,
                            help="Sampling plan: size each --component's share so that, at its expected validation "
                                 "rate, it ends with this many validated instances (STEL sampled more simple than "
                                 "formal items).")
        parser.add_argument("--validation-rate", action="append", default=[], metavar="COMPONENT=RATE",
                            help="Expected validation rate of a component (repeatable), e.g. simplicity=0.68.")
        parser.add_argument("--rates-from-study", action="append", default=[], metavar="SLUG",
                            help="Measure the rates on earlier, filtered studies (repeatable).")
        parser.add_argument("--preset", help="Rating preset: gyafc (likert: formality, fluency, meaning; ranking: "
                                             "overall ranking) or pauli (likert: style strength, content).")
        parser.add_argument("--outputs", help="CSV/TSV/JSONL of system outputs for a likert or ranking study: "
                                              "id, source, rewrite[, system, source_id] or id, source, <system>…")
        parser.add_argument("--outputs-study", help="A rewrite study whose accepted rewrites are to be rated.")
        rewrite_arguments_add(parser)

    def run(self, **options: Any) -> dict[str, Any]:
        kind = options["kind"] or options["setup"]
        if not kind:
            raise ApplicationError("give --setup (quadruple, triple, style-or-content) or --kind.")
        if options["count"] is not None and options["count"] < 1:
            raise ApplicationError("--count must be at least 1.")
        plan = self.plan(kind, options) if options["target_validated"] is not None else None
        practice = json_file_read(options["practice"], "--practice") if options["practice"] else None
        if practice is not None and not isinstance(practice, list):
            raise ApplicationError(f"{options['practice']}: expected a JSON list of practice items.")
        if sum(bool(options[key]) for key in ("items", "outputs", "outputs_study")) > 1:
            raise ApplicationError("give one of --items, --outputs and --outputs-study, not several.")
        preset = rating_preset_get(preset=options["preset"], kind=kind) if options["preset"] else {}
        items = items_read_jsonl(path=Path(options["items"]), kind=kind) if options["items"] else None
        if options["outputs"]:
            items = rating_items_read(path=options["outputs"], kind=kind)
        if options["outputs_study"]:
            items = rating_items_from_rewrite_study(study_slug=options["outputs_study"], kind=kind)
        questions = questions_load(spec=options["questions"]) if options["questions"] else preset.get("questions")
        options["annotators_per_item"] = options["annotators_per_item"] or preset.get("annotators_per_item", 5)
        options["task_description"] = options["task_description"] or preset.get("task_description")
        eligibility = None
        if options["eligibility"] == "none":
            eligibility = []
        elif options["eligibility"]:
            eligibility = json_file_read(options["eligibility"], "--eligibility")
            if not isinstance(eligibility, list) or not all(
                isinstance(q, dict) and q.get("name") and q.get("choices") for q in eligibility
            ):
                raise ApplicationError(f"{options['eligibility']}: expected a list of {{name, text, choices, accept}}.")
        if kind == ItemKind.REWRITE and (options["sources"] or options["sources_corpus"]):
            return self.create_rewrite(options, eligibility)
        with transaction.atomic():
            study = self.create(kind, options, items, questions, eligibility, plan, practice)
        leak_warnings = self.audit(study)
        per_component: dict[str, int] = {}
        for name in study.items.values_list("component__name", flat=True):
            per_component[name or "-"] = per_component.get(name or "-", 0) + 1
        progress = study_progress(study=study)
        return {
            "study": study.slug, "item_kind": study.item_kind, "items": progress["items"],
            "per_component": per_component, "annotators_per_item": study.annotators_per_item,
            "min_correct": study.min_correct, "items_per_batch": study.items_per_batch,
            "screening_per_batch": study.screening_per_batch, "max_batches": study.max_batches_per_participant,
            "adaptive": study.adaptive_stopping, "completion_code": study.completion_code,
            "screened_out_code": study.screened_out_code, "platform": study.platform,
            "allow_anonymous": study.allow_anonymous,
            "selection": study.selection, "url": f"/s/{study.slug}/", "sampling_plan": plan,
            "leak_warnings": leak_warnings, "practice_items": study.practice_items.count(),
        }

    def create_rewrite(self, options: dict[str, Any], eligibility: Any) -> dict[str, Any]:
        study, summary = rewrite_study_from_options(options, {
            "slug": options["slug"], "title": options["title"], "annotators_per_item": options["annotators_per_item"],
            "items_per_batch": options["items_per_batch"], "max_batches": options["max_batches"],
            "time_limit_minutes": options["time_limit"], "consent_text": options["consent_text"],
            "eligibility_questions": eligibility, "task_description": options["task_description"],
            "completion_code": options["completion_code"], "screened_out_code": options["screened_out_code"],
            "redirect_url": options["redirect_url"], "estimated_minutes": options["estimated_minutes"],
            "target_hourly_pay": options["hourly_pay"], "platform": options["platform"],
            "prolific_study_id": options["prolific_study_id"], "allow_anonymous": options["allow_anonymous"],
        })
        return {"study": study.slug, "item_kind": study.item_kind, "items": study.items.count(),
                "annotators_per_item": study.annotators_per_item, "completion_code": study.completion_code,
                "url": f"/s/{study.slug}/", **summary}

    def create(self, kind: str, options: dict[str, Any], items: Any, questions: Any, eligibility: Any,
               plan: dict[str, Any] | None, practice: list[Any] | None) -> Any:
        study = study_create(
            slug=options["slug"], item_kind=kind, title=options["title"], setup=options["setup"],
            corpus=options["corpus"], component=options["component"],
            status=None if options["status"] == "any" else options["status"], count=options["count"],
            seed=options["seed"], annotators_per_item=options["annotators_per_item"],
            min_correct=options["min_correct"], items_per_batch=options["items_per_batch"],
            screening_per_batch=options["screening_per_batch"], max_batches=options["max_batches"],
            time_limit_minutes=options["time_limit"], adaptive=options["adaptive"],
            allow_multiple_setups=options["allow_multiple_setups"], items=items, questions=questions,
            consent_text=options["consent_text"], eligibility_questions=eligibility,
            task_description=options["task_description"], completion_code=options["completion_code"],
            screened_out_code=options["screened_out_code"], redirect_url=options["redirect_url"],
            estimated_minutes=options["estimated_minutes"], target_hourly_pay=options["hourly_pay"],
            rewrite_min_length=options["rewrite_min_length"], platform=options["platform"],
            prolific_study_id=options["prolific_study_id"], allow_anonymous=options["allow_anonymous"],
            first_answer_grace_seconds=options["first_answer_grace_seconds"],
            max_open_batches=options["max_open_batches"], min_seconds_per_item=options["min_seconds_per_item"],
            counts_per_component={name: entry["sample"] for name, entry in plan["components"].items()}
            if plan else None,
        )
        if practice is not None:
            practice_items_set(study=study, items=practice)
        return study

    def audit(self, study: Any) -> list[str]:
        """The leak detector on every corpus the study draws instances from (tasks.services.leaks)."""
        from tasks.models import Corpus
        from tasks.services.leaks import instances_audit

        corpus_ids = set(study.items.filter(instance__isnull=False).values_list("instance__corpus_id", flat=True))
        warnings: list[str] = []
        for corpus in Corpus.objects.filter(pk__in=corpus_ids).select_related("component").order_by("name"):
            report = instances_audit(corpus=corpus, setup=study.item_kind)
            warnings += [f"corpus '{corpus.name}': {warning}" for warning in report["warnings"]]
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        return warnings

    def plan(self, kind: str, options: dict[str, Any]) -> dict[str, Any]:
        rates: dict[str, float] = {}
        for entry in options["validation_rate"]:
            name, sep, value = entry.partition("=")
            try:
                rates[name.strip()] = float(value)
            except ValueError:
                raise ApplicationError(f"--validation-rate {entry!r}: expected COMPONENT=RATE") from None
            if not sep:
                raise ApplicationError(f"--validation-rate {entry!r}: expected COMPONENT=RATE")
        return sampling_plan_compute(
            setup=options["setup"] or kind, components=options["component"] or [],
            target_validated=options["target_validated"], rates=rates, rates_from_studies=options["rates_from_study"],
            corpus=options["corpus"], status=None if options["status"] == "any" else options["status"],
        )
