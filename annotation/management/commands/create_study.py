"""python manage.py create_study --slug S --setup quadruple [--component formality] [--count 100 --seed 1] …"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction

from annotation.management.rewrite_options import rewrite_arguments_add, rewrite_spec_from_options
from annotation.models import ORDERING_KINDS, ItemKind
from annotation.selectors import study_progress
from annotation.services.rating_presets import rating_records_read
from annotation.services.rewrite_settings import REWRITE_DEFAULTS
from annotation.services.sampling_plan import validation_rates_parse
from annotation.services.studies import QUESTION_PRESETS, items_read_jsonl, questions_load
from annotation.services.study_build import study_build, study_items_source_check
from annotation.services.study_settings import (
    STUDY_SETTINGS,
    cli_arguments_add,
    study_settings_summary,
)
from core.commands import JsonCommand, json_file_read
from core.errors import ApplicationError
from tasks.models import Corpus
from tasks.services.leaks import instances_audit


class Command(JsonCommand):
    help = "Create a study from task instances (ordering kinds) or an items file (likert, ranking, rewrite)."
    cli_fields = {"item_kind": "kind", "signal_thresholds": "signal_threshold", "signal_auto_reject": "auto_reject",
                  "validation_rates": "validation_rate", "rates_from_studies": "rates_from_study",
                  "min_length": "rewrite_min_length", "max_length": "rewrite_max_length",
                  "min_accepted": "qualify_min_accepted", "min_rate": "qualify_min_rate"}

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--slug", required=True)
        parser.add_argument("--kind", choices=ItemKind.values, help="Item kind; defaults to --setup.")
        parser.add_argument("--setup", choices=[k.value for k in ORDERING_KINDS])
        parser.add_argument("--component", action="append", help="Style component name (repeatable).")
        parser.add_argument("--corpus", action="append", help="Corpus name (repeatable).")
        parser.add_argument("--status", default="candidate", help="Instance status (candidate, validated, any).")
        parser.add_argument("--count", type=int)
        parser.add_argument("--seed", type=int, default=0)
        cli_arguments_add(parser)  # the declared study settings (annotation.services.study_settings)
        parser.add_argument("--items", help="JSONL items file for likert/ranking/rewrite studies.")
        parser.add_argument("--questions",
                            help="Likert questions: preset (mind-the-style-gap, gyafc, pauli) or JSON file.")
        parser.add_argument("--eligibility", help="JSON file with eligibility questions ('none' for no questions).")
        parser.add_argument("--rewrite-min-length", type=int, default=REWRITE_DEFAULTS["min_length"])
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
        study_items_source_check(items=options["items"], outputs=options["outputs"],
                                 outputs_study=options["outputs_study"])  # before any file is read
        practice = json_file_read(options["practice"], "--practice") if options["practice"] else None
        if practice is not None and not isinstance(practice, list):
            raise ApplicationError(f"{options['practice']}: expected a JSON list of practice items.")
        items = items_read_jsonl(path=Path(options["items"]), kind=kind) if options["items"] else None
        outputs = None
        if options["outputs"]:
            outputs = rating_records_read(path=options["outputs"])
        questions: Any = options["questions"]
        if questions and questions not in QUESTION_PRESETS:
            questions = questions_load(spec=questions)
        eligibility = None
        if options["eligibility"] == "none":
            eligibility = []
        elif options["eligibility"]:
            eligibility = json_file_read(options["eligibility"], "--eligibility")
            if not isinstance(eligibility, list):
                raise ApplicationError(f"{options['eligibility']}: expected a list of {{name, text, choices, accept}}.")
        rewrite = None
        if kind == ItemKind.REWRITE and (options["sources"] or options["sources_corpus"]):
            rewrite = rewrite_spec_from_options(options)
        settings = {s.name: options[s.name] for s in STUDY_SETTINGS}
        if kind not in ORDERING_KINDS and rewrite is None:
            settings["rewrite_min_length"] = options["rewrite_min_length"]
        with transaction.atomic():
            built = study_build(
                slug=options["slug"], kind=kind, setup=options["setup"], corpus=options["corpus"],
                component=options["component"], status=options["status"], count=options["count"],
                seed=options["seed"], items=items, outputs=outputs, outputs_where=options["outputs"] or "Outputs",
                outputs_study=options["outputs_study"] or "", preset=options["preset"] or "", questions=questions,
                eligibility_questions=eligibility, target_validated=options["target_validated"],
                validation_rates=validation_rates_parse(options["validation_rate"]),
                rates_from_studies=options["rates_from_study"], practice=practice, rewrite=rewrite, **settings,
            )
        study = built.study
        if built.sources is not None:
            return {"study": study.slug, "item_kind": study.item_kind, "items": study.items.count(),
                    **study_settings_summary(study), "url": f"/s/{study.slug}/", **built.sources}
        leak_warnings = self.audit(study)
        per_component: dict[str, int] = {}
        for name in study.items.values_list("component__name", flat=True):
            per_component[name or "-"] = per_component.get(name or "-", 0) + 1
        progress = study_progress(study=study)
        return {
            "study": study.slug, "item_kind": study.item_kind, "items": progress["items"],
            "per_component": per_component, **study_settings_summary(study), "selection": study.selection,
            "url": f"/s/{study.slug}/", "sampling_plan": built.sampling_plan,
            "leak_warnings": leak_warnings, "practice_items": study.practice_items.count(),
        }

    def audit(self, study: Any) -> list[str]:
        """The leak detector on every corpus the study draws instances from (tasks.services.leaks)."""

        corpus_ids = set(study.items.filter(instance__isnull=False).values_list("instance__corpus_id", flat=True))
        warnings: list[str] = []
        for corpus in Corpus.objects.filter(pk__in=corpus_ids).select_related("component").order_by("name"):
            report = instances_audit(corpus=corpus, setup=study.item_kind)
            warnings += [f"corpus '{corpus.name}': {warning}" for warning in report["warnings"]]
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        return warnings
