"""The card's facts, one function per section (Gebru et al.'s datasheet: motivation, composition, collection,
preprocessing, uses, distribution, maintenance), each read from the database and the exported rows, never typed."""
from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Any

from django.db.models import Count, Max, Min, Q

from annotation.models import Batch, Participant, Response, Study
from annotation.selectors import study_consent_versions
from annotation.services.consent import consent_sha256, consent_text_full
from core.erasure import erasures_of_study
from platforms.services.retention import retention_days
from scoring.agreement.filtering import filter_run_summary
from scoring.export.card.annotators import study_personas_released
from scoring.export.card.context import CardContext
from scoring.export.card.costs import study_cost_facts
from scoring.model_annotators.comparison import models_card
from scoring.models import AgreementRun, FilterRun
from tasks.models import GenerationRun, ScreeningQuestion, StyleComponent
from tasks.services.leaks import rows_audit

SETUP_TASKS = {
    "quadruple": "given anchors A1 and A2 in two styles, which order of S1 and S2 matches them (same style as A1, "
                 "same style as A2)",
    "triple": "given anchor A1, which of S1 and S2 is in A1's style",
    "style-or-content": "given anchor A1, which of S1 (or S2) shares A1's style rather than its content",
}
AGREEMENT_KEYS = ("fleiss_kappa", "fleiss_kappa_ci", "krippendorff_alpha", "krippendorff_alpha_ci",
                  "majority_accuracy")


def _counts(values: Any) -> dict[str, int]:
    return {str(key): int(n) for key, n in sorted(Counter(values).items(), key=lambda kv: str(kv[0]))}


# --- motivation (and intended uses)----------------------------------------------------------------------------------


def motivation_facts(ctx: CardContext) -> dict[str, Any]:
    names = sorted(set(ctx.frame["style_type"]))
    components = StyleComponent.objects.filter(name__in=names).order_by("name")
    setups = sorted(set(ctx.frame["setup"]))
    validated = ctx.filter_run is not None
    return {
        "purpose": (
            f"Does a style measure (a representation, a similarity, a model) capture {', '.join(names)}? Each "
            "instance of this STEL-style benchmark asks it to match texts by style while their content differs: "
            + "; ".join(f"{setup}: {SETUP_TASKS.get(setup, setup)}" for setup in setups) + ". "
            + ("The labels come from the parallel corpora's construction and were validated by crowd annotation."
               if validated else "The labels come from the parallel corpora's construction.")),
        "components": [{"name": c.name, "kind": c.kind, "style_1": c.label_1, "style_2": c.label_2,
                        "description": c.description} for c in components],
        "setups": setups,
        "created_with": "StyleCrowd (the STEL pipeline: Wegmann & Nguyen 2021, as a product)",
        "intended_uses": ["evaluating whether style representations and similarity measures tell the benchmark's "
                          "styles apart independently of content", "comparing such measures on the same instances"],
        "out_of_scope": ["judging individual people's writing or identity", "training a style classifier and "
                         "reporting its score on these same instances"],
    }


# --- composition-----------------------------------------------------------------------------------------------------


def composition_facts(ctx: CardContext) -> dict[str, Any]:
    frame = ctx.frame
    votes = frame.loc[frame["votes"] >= 0, "votes"]
    return {
        "instances": len(frame),
        "per_component_setup": {str(c): _counts(group["setup"]) for c, group in frame.groupby("style_type")},
        "per_status": _counts(frame["status"]),
        "per_corpus": _counts(frame["corpus"]),
        "label_balance": {str(c): _counts(group["correct_alternative"]) for c, group in frame.groupby("style_type")},
        "splits": _counts(frame["split"]),
        "per_component_split": {str(c): _counts(group["split"]) for c, group in frame.groupby("style_type")},
        "votes": {"from_annotations": int((frame["votes_source"] == "annotations").sum()),
                  "published": int((frame["votes_source"] == "published").sum()),
                  "none": int((frame["votes"] < 0).sum()), "distribution": _counts(votes.astype(int))},
        "texts_included": not ctx.ids_only,
        "personal_information": "The texts are sentences from the source corpora; no annotator's platform id is part "
                                "of the data files: the instances carry the number of correct votes, and the "
                                "per-annotator votes table (where published) names annotators by keyed pseudonyms.",
    }


# --- collection------------------------------------------------------------------------------------------------------


def _reason_category(reason: str) -> str:
    text = reason.strip()
    if text.startswith("failed screening question"):
        return "failed a screening question"
    if text.startswith("excluded by "):
        return "excluded by a researcher"
    return text.split(":", 1)[0].strip() or "no reason recorded"


def _demographics(study: Study) -> dict[str, Any]:
    """Persona answers where the study asked for them (PASTEL), as released k-anonymously (core.anonymity: every
    released combination held by at least k people); past retention, the k-anonymous counts kept when the answers
    were deleted; {} where none were asked."""
    released = study_personas_released(study)[0]
    if released:
        return released
    kept = ((study.selection or {}).get("persona_aggregates") or {}).get("attributes", {})
    return {attribute: entry["values"] for attribute, entry in kept.items()}


def study_collection_facts(study: Study) -> dict[str, Any]:
    participants = Participant.objects.filter(study=study)
    batches = Batch.objects.filter(study=study)
    per_person = participants.aggregate(
        arrived=Count("id", distinct=True),
        consented=Count("id", filter=Q(batches__consented_at__isnull=False), distinct=True),
        started=Count("id", filter=Q(batches__started_at__isnull=False), distinct=True),
        completed=Count("id", filter=Q(batches__state=Batch.State.COMPLETED), distinct=True),
        declined=Count("id", filter=Q(batches__state=Batch.State.DECLINED), distinct=True),
        timed_out=Count("id", filter=Q(batches__state=Batch.State.EXPIRED), distinct=True),
    )
    screened = Counter(_reason_category(r) for r in participants.filter(screened_out=True)
                       .values_list("exclusion_reason", flat=True))
    excluded = Counter(_reason_category(r) for r in participants.filter(excluded=True)
                       .values_list("exclusion_reason", flat=True))
    responses = Response.objects.filter(study=study)
    dates = responses.aggregate(first=Min("answered_at"), last=Max("answered_at"))
    first_session = batches.aggregate(first=Min("created_at"))["first"]
    seconds = [s for s in responses.filter(is_screening=False, is_valid=True, server_seconds__isnull=False)
               .values_list("server_seconds", flat=True)]
    screening_names = sorted(set(responses.filter(screening_question__isnull=False)
                                 .values_list("screening_question__name", flat=True)))
    public = set(ScreeningQuestion.objects.filter(name__in=screening_names, source__icontains="stel")
                 .values_list("name", flat=True))
    return {
        "study": study.slug, "title": study.title, "origin": study.origin, "origin_label": study.get_origin_display(),
        "item_kind": study.item_kind,
        "platform": study.platform,
        "participant_platforms": _counts(participants.values_list("platform", flat=True)),
        "dates": {"first_session": (first_session or dates["first"]).isoformat(timespec="seconds")
                  if (first_session or dates["first"]) else None,
                  "last_response": dates["last"].isoformat(timespec="seconds") if dates["last"] else None},
        "participants": {"arrived": per_person["arrived"], "consented": per_person["consented"],
                         "started_items": per_person["started"], "completed_a_batch": per_person["completed"],
                         "declined_consent": per_person["declined"], "timed_out": per_person["timed_out"],
                         "screened_out": dict(sorted(screened.items())), "excluded": dict(sorted(excluded.items()))},
        "responses": {"total": responses.filter(is_screening=False).count(),
                      "valid": responses.filter(is_screening=False, is_valid=True).count(),
                      "screening": responses.filter(is_screening=True).count()},
        "design": {"annotators_per_item": study.annotators_per_item, "min_correct": study.min_correct,
                   "items_per_batch": study.items_per_batch, "screening_per_batch": study.screening_per_batch,
                   "max_batches_per_participant": study.max_batches_per_participant,
                   "batch_time_limit_minutes": study.batch_time_limit_minutes,
                   "adaptive_stopping": study.adaptive_stopping,
                   "min_seconds_per_item": study.min_seconds_per_item},
        "screening": {
            "policy": (f"{study.screening_per_batch} screening question(s) mixed into every batch; one wrong answer "
                       "excludes the participant and every response of theirs, and their items reopen for others"
                       if study.screening_per_batch else "no screening questions"),
            "questions_used": screening_names,
            "public_questions_used": sorted(public),
        },
        "median_seconds_per_item": round(statistics.median(seconds), 2) if seconds else None,
        "pay": study_cost_facts(study),
        "demographics": _demographics(study),
        "retention": {"days": retention_days(study=study), "applied_at": study.retention_applied_at.isoformat(
            timespec="seconds") if study.retention_applied_at else None},
        "erased_on_request": erasures_of_study(study_id=study.pk),
    }


def collection_facts(ctx: CardContext) -> dict[str, Any]:
    filter_rule = None
    if ctx.filter_run is not None:
        filter_rule = {**filter_run_summary(ctx.filter_run), "rule": ctx.filter_run.statistics.get("rule"),
                       "date": ctx.filter_run.created_at.isoformat(timespec="seconds")}
        for key in ("counts_before", "counts_after", "notes"):
            filter_rule.pop(key, None)
    return {
        "studies": [study_collection_facts(study) for study in ctx.studies],
        "filter": filter_rule,
        "without_annotation": int((ctx.frame["votes_source"] != "annotations").sum()),
    }


# --- instructions, examples, practice items and consent, verbatim----------------------------------------------------


def _consent_versions(study: Study) -> list[dict[str, Any]]:
    """Each consent text participants agreed to, with its sha256 and how many agreed; a study nobody has agreed to
    yet (or of imported annotations) shows the text it would show now, agreed to by nobody."""
    versions = study_consent_versions(study=study)
    if not versions and study.origin == Study.Origin.PLATFORM:
        text = consent_text_full(study=study)
        versions = [{"sha256": consent_sha256(text), "text": text, "created_at": None, "participants": 0,
                     "sessions": 0}]
    return [{"sha256": v["sha256"], "text": v["text"], "participants": v["participants"], "sessions": v["sessions"],
             "first_agreed": v["created_at"].isoformat(timespec="seconds") if v["created_at"] else None}
            for v in versions]


def instructions_facts(ctx: CardContext) -> dict[str, Any]:
    out = []
    for study in ctx.studies:
        settings = getattr(study, "rewrite_settings", None) if study.item_kind == "rewrite" else None
        out.append({
            "study": study.slug,
            "task_description": study.task_description,
            "consent_text": study.consent_text,
            "consent_versions": _consent_versions(study),
            "eligibility_questions": study.eligibility_questions,
            "questions": study.questions,
            "practice_items": [{"anchor_1": p.anchor_1, "anchor_2": p.anchor_2, "sentence_1": p.sentence_1,
                                "sentence_2": p.sentence_2, "correct_answer": p.correct_answer,
                                "explanation": p.explanation} for p in study.practice_items.order_by("position")],
            "examples": list(getattr(settings, "examples", []) or []),
            "screening_questions": "names only: their texts stay private, since they screen future participants",
        })
    return {"studies": out}


# --- agreement-------------------------------------------------------------------------------------------------------


def _agreement_entry(study: Study) -> dict[str, Any] | None:
    """The latest filter run's statistics of the study, else its latest computed agreement run."""
    run = FilterRun.objects.filter(study=study).order_by("-created_at", "-id").first()
    if run is not None:
        stats = run.statistics
        return {"study": study.slug, "source": f"filter run #{run.pk}", "bootstrap_seed": run.seed or 0,
                **{key: stats.get(key) for key in AGREEMENT_KEYS},
                "components": {name: {key: values.get(key) for key in (*AGREEMENT_KEYS, "n_validated")}
                               for name, values in (stats.get("components") or {}).items()}}
    latest = AgreementRun.objects.filter(study=study, computed_at__isnull=False).order_by("-computed_at").first()
    if latest is None:
        return None
    result = latest.result
    return {"study": study.slug, "source": f"agreement run #{latest.pk}",
            "bootstrap_seed": latest.params.get("seed", 0),
            **{key: result.get(key) for key in AGREEMENT_KEYS},
            "components": {name: {key: values.get(key) for key in (*AGREEMENT_KEYS, "n_validated")}
                           for name, values in (result.get("components") or {}).items()}}


def agreement_facts(ctx: CardContext) -> dict[str, Any]:
    entries = [entry for entry in (_agreement_entry(study) for study in ctx.studies) if entry]
    if ctx.filter_run is not None:  # the filter that decided this export's statuses comes first
        entries.sort(key=lambda e: e["study"] != ctx.filter_run.study.slug)
    if not entries:
        return {}
    return {**entries[0], "studies": entries}


def models_facts(ctx: CardContext) -> list[dict[str, Any]]:
    """Each finished model run of the card's studies: its accuracy on these rows and on those validated, with the
    agreement figures of the study's latest agreement run (scoring.model_annotators.comparison)."""

    if ctx.frame.empty or "instance_id" not in ctx.frame:
        return []
    return models_card(instance_ids=[int(i) for i in ctx.frame["instance_id"]], studies=ctx.studies)


# --- the leak audit--------------------------------------------------------------------------------------------------


def leak_audit_facts(ctx: CardContext) -> dict[str, Any]:
    """tasks.services.leaks on exactly the exported rows, per component (examples left out: they are texts)."""
    out: dict[str, Any] = {}
    for component, group in ctx.frame.groupby("style_type"):
        rows = list(zip(group["anchor_1"], group["anchor_2"], group["alternative_1_1"], group["alternative_1_2"],
                        group["correct_alternative"].astype(int), strict=True))
        report = rows_audit(rows=rows, component=str(component))
        out[str(component)] = {
            "instances": report["instances"], "passed": report["passed"], "leaks": report["leaks"],
            "warnings": report["warnings"], "notes": report["notes"], "style_markers": report["style_markers"],
            "features": [{key: f[key] for key in ("feature", "decided", "right", "accuracy", "pvalue", "leak",
                                                  "style_marker", "informational")} for f in report["features"]],
        }
    return out


# --- preprocessing---------------------------------------------------------------------------------------------------


def preprocessing_facts(ctx: CardContext) -> dict[str, Any]:
    corpora = []
    for corpus in ctx.corpora:
        params = corpus.import_params or {}
        stats = params.get("stats") or {}
        corpora.append({
            "corpus": corpus.name, "component": corpus.component.name, "import_format": corpus.import_format,
            "language": corpus.language,
            "detokenize": params.get("detokenize"), "normalizer": params.get("normalizer"),
            "pair_test": None if corpus.import_format == "stel" else {
                "min_edit_distance": params.get("min_edit_distance"),
                "rule": "non-empty, not equal, neither a substring of the other, character edit distance at least "
                        "the minimum (STEL)",
                "skipped": {key.removeprefix("skipped_"): value for key, value in stats.items()
                            if key.startswith("skipped_")}},
            "rows_read": corpus.n_rows_read, "pairs": corpus.n_pairs, "skipped": corpus.n_skipped,
            "builder": params.get("builder"), "seed": params.get("seed"),
            "built_from_rewrites": params if params.get("builder") == "rewrites" else None,
        })
    run_ids = [int(i) for i in ctx.frame["generation_run_id"].dropna().unique()]
    runs = GenerationRun.objects.filter(pk__in=run_ids).select_related("corpus").order_by("id")
    return {
        "corpora": corpora,
        "generation": [{"corpus": r.corpus.name, "setup": r.setup, "seed": r.seed, "count": r.count,
                        "instances": r.n_instances, "params": r.params} for r in runs],
    }


# --- limitations-----------------------------------------------------------------------------------------------------


def limitations_facts(ctx: CardContext) -> list[str]:
    """Known limitations, each derived from a fact the card states elsewhere."""
    frame = ctx.frame
    notes = []
    if ctx.filter_run is None:
        notes.append("No filter run decided these instances: their labels are the corpora's construction, not "
                     "validated by annotators.")
    unvoted = int((frame["votes"] < 0).sum())
    if unvoted:
        notes.append(f"{unvoted} of {len(frame)} instances have no votes (not annotated, or annotation incomplete).")
    published = int((frame["votes_source"] == "published").sum())
    if published:
        notes.append(f"{published} instances keep the votes of their published STEL file; they were not "
                     "re-annotated here.")
    for study in ctx.studies:
        if study.annotators_per_item < 5:
            notes.append(f"Study `{study.slug}` asked only {study.annotators_per_item} annotators per instance.")
        if study.screening_per_batch and ScreeningQuestion.objects.filter(
                source__icontains="stel", name__in=Response.objects.filter(study=study, is_screening=True)
                .values("screening_question__name")).exists():
            notes.append(f"Study `{study.slug}` used public screening questions (STEL's, whose answers are "
                         "published): a participant who knew them could pass screening.")
    languages = sorted({c.language for c in ctx.corpora})
    notes.append(f"Language(s): {', '.join(languages)}; the styles are those of the source corpora's domains and "
                 "may not transfer to other genres.")
    for component, counts in frame.groupby("style_type")["correct_alternative"]:
        shares = counts.value_counts(normalize=True)
        if len(frame) >= 20 and shares.max() > 0.6:
            notes.append(f"{component}: the correct alternative is unbalanced ({shares.max():.0%} of instances are "
                         f"alternative {int(shares.idxmax())}); a method with a position bias gains from it.")
    return notes


# --- licences, files, versions---------------------------------------------------------------------------------------


def _rebuild_recipe(ctx: CardContext) -> list[str]:
    steps = []
    for corpus in ctx.corpora:
        params = corpus.import_params or {}
        files = " ".join(re.sub(r"^\d\d-", "", str(path).replace("\\", "/").rsplit("/", 1)[-1])
                         for path in params.get("files") or [params.get("file", "")] if path)
        options = [f"--name {corpus.name}", f"--component {corpus.component.name}",
                   f"--format {corpus.import_format}"]
        if corpus.import_format == "turkcorpus":
            options.append(f"--seed {params.get('seed', 0)}")
        if params.get("min_edit_distance") is not None and corpus.import_format != "stel":
            options.append(f"--min-edit-distance {params['min_edit_distance']}")
        if params.get("detokenize") is not None:
            options.append("--detokenize" if params["detokenize"] else "--no-detokenize")
        if corpus.licence:
            options.append(f"--licence {corpus.licence}")
        steps.append(f"python manage.py import_corpus {' '.join(options)} <your copy of: {files or 'the files'}>")
    steps.append("python manage.py rebuild_benchmark <this ids file> --format stel-tsv --out benchmark.tsv  "
                 "# the texts from your corpora, each row checked against its text_sha256")
    return steps


def licences_facts(ctx: CardContext) -> dict[str, Any]:
    ids = sorted({f["licence"] for f in ctx.licences if f["licence"]})
    return {
        "corpora": ctx.licences,
        "licences": ids,
        "mixed": len(ids) > 1,
        "not_recorded": [f["corpus"] for f in ctx.licences if not f["licence"]],
        "text_included": not ctx.ids_only,
        "rebuild": _rebuild_recipe(ctx) if ctx.ids_only else None,
        "annotations": "The votes and labels were produced with StyleCrowd; the texts stay under their corpora's "
                       "licences, listed here.",
    }


def files_facts(ctx: CardContext) -> list[dict[str, Any]]:
    return ctx.files


def version_facts(ctx: CardContext) -> dict[str, Any]:
    return {"name": ctx.name, "version": ctx.version, "changelog": ctx.changelog,
            "plan": "Each export of this name gets a version (MAJOR: instances dropped or relabelled; MINOR: "
                           "added; PATCH: only votes changed); the changelog compares it with the version before."}
