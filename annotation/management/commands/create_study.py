"""python manage.py create_study --slug S --setup quadruple [--component formality] [--count 100 --seed 1] …"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotation.models import ORDERING_KINDS, ItemKind
from annotation.selectors import study_progress
from annotation.services.rating_presets import (
    rating_items_from_rewrite_study,
    rating_items_read,
    rating_preset_get,
)
from annotation.services.studies import items_read_jsonl, questions_load, study_create
from core.commands import JsonCommand
from core.errors import ApplicationError


def _json_file(path: str, flag: str) -> Any:
    file = Path(path)
    if not file.exists():
        raise ApplicationError(f"{flag}: file {file} not found.")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{file}: line {exc.lineno}: invalid JSON ({exc.msg}).") from exc


class Command(JsonCommand):
    help = "Create a study from task instances (ordering kinds) or an items file (likert, ranking, rewrite)."

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
        parser.add_argument("--preset", help="Rating preset: gyafc (likert: formality, fluency, meaning; ranking: "
                                             "overall ranking) or pauli (likert: style strength, content).")
        parser.add_argument("--outputs", help="CSV/TSV/JSONL of system outputs for a likert or ranking study: "
                                              "id, source, rewrite[, system, source_id] or id, source, <system>…")
        parser.add_argument("--outputs-study", help="A rewrite study whose accepted rewrites are to be rated.")

    def run(self, **options: Any) -> dict[str, Any]:
        kind = options["kind"] or options["setup"]
        if not kind:
            raise ApplicationError("give --setup (quadruple, triple, style-or-content) or --kind.")
        if options["count"] is not None and options["count"] < 1:
            raise ApplicationError("--count must be at least 1.")
        if sum(bool(options[key]) for key in ("items", "outputs", "outputs_study")) > 1:
            raise ApplicationError("give one of --items, --outputs and --outputs-study, not several.")
        preset = rating_preset_get(preset=options["preset"], kind=kind) if options["preset"] else {}
        items = items_read_jsonl(path=Path(options["items"]), kind=kind) if options["items"] else None
        if options["outputs"]:
            items = rating_items_read(path=options["outputs"], kind=kind)
        if options["outputs_study"]:
            items = rating_items_from_rewrite_study(study_slug=options["outputs_study"], kind=kind)
        questions = questions_load(spec=options["questions"]) if options["questions"] else preset.get("questions")
        annotators_per_item = options["annotators_per_item"] or preset.get("annotators_per_item", 5)
        eligibility = None
        if options["eligibility"] == "none":
            eligibility = []
        elif options["eligibility"]:
            eligibility = _json_file(options["eligibility"], "--eligibility")
            if not isinstance(eligibility, list) or not all(
                isinstance(q, dict) and q.get("name") and q.get("choices") for q in eligibility
            ):
                raise ApplicationError(f"{options['eligibility']}: expected a list of {{name, text, choices, accept}}.")
        study = study_create(
            slug=options["slug"], item_kind=kind, title=options["title"], setup=options["setup"],
            corpus=options["corpus"], component=options["component"],
            status=None if options["status"] == "any" else options["status"], count=options["count"],
            seed=options["seed"], annotators_per_item=annotators_per_item,
            min_correct=options["min_correct"], items_per_batch=options["items_per_batch"],
            screening_per_batch=options["screening_per_batch"], max_batches=options["max_batches"],
            time_limit_minutes=options["time_limit"], adaptive=options["adaptive"],
            allow_multiple_setups=options["allow_multiple_setups"], items=items, questions=questions,
            consent_text=options["consent_text"], eligibility_questions=eligibility,
            task_description=options["task_description"] or preset.get("task_description"),
            completion_code=options["completion_code"],
            screened_out_code=options["screened_out_code"], redirect_url=options["redirect_url"],
            estimated_minutes=options["estimated_minutes"], target_hourly_pay=options["hourly_pay"],
            rewrite_min_length=options["rewrite_min_length"],
        )
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
            "screened_out_code": study.screened_out_code,
            "selection": study.selection, "url": f"/s/{study.slug}/",
        }
