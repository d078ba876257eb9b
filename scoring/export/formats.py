"""export_benchmark: task instances out as STEL TSV (exactly STEL's format), JSONL or Parquet, with a dataset card.

Data files are reproducible byte for byte from the same database: rows in a fixed order (corpus name, setup,
position, id), no timestamps inside them, written to a temporary name and renamed. The card beside the file
(JSON + Markdown) carries the date and everything else needed to cite and reproduce the export.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from django.db import transaction
from django.utils import timezone

from annotation.models import Study, StudyItem
from core.errors import ApplicationError
from scoring.agreement import selectors
from scoring.agreement.stats.votes import first_k_responses, instance_votes
from scoring.models import AgreementRun, BenchmarkExport, FilterRun
from tasks.models import Corpus, GenerationRun, Setup, StyleComponent, TaskInstance

STEL_COLUMNS = ["Anchor 1", "Anchor 2", "Alternative 1.1", "Alternative 1.2", "Correct Alternative", "ID",
                "# Votes out of 5 for Correct Alternative", "style type"]
PLAIN_FIELDS = ["anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2", "correct_alternative", "id", "votes",
                "style_type"]
FORMATS = ("stel-tsv", "jsonl", "parquet")
STATUSES = ("candidate", "validated", "rejected", "all")
PARQUET_SCHEMA = pa.schema([
    ("index", pa.int64()), ("anchor_1", pa.string()), ("anchor_2", pa.string()), ("alternative_1_1", pa.string()),
    ("alternative_1_2", pa.string()), ("correct_alternative", pa.int8()), ("id", pa.string()),
    ("votes", pa.int16()), ("style_type", pa.string()),
])


def _instances(*, corpus: str, component: str, setup: str, status: str, study: Study | None) -> pd.DataFrame:
    queryset = TaskInstance.objects.all()
    if corpus:
        if not Corpus.objects.filter(name=corpus).exists():
            raise ApplicationError(f"corpus '{corpus}' does not exist", code="unknown_corpus", status=404)
        queryset = queryset.filter(corpus__name=corpus)
    if component:
        if not StyleComponent.objects.filter(name=component).exists():
            raise ApplicationError(f"style component '{component}' does not exist", code="unknown_component")
        queryset = queryset.filter(component__name=component)
    if setup:
        if setup not in Setup.values:
            raise ApplicationError(f"setup '{setup}' must be one of {', '.join(Setup.values)}", code="invalid_setup")
        queryset = queryset.filter(setup=setup)
    if status != "all":
        queryset = queryset.filter(status=status)
    if study is not None:
        queryset = queryset.filter(
            pk__in=StudyItem.objects.filter(study=study, instance__isnull=False).values("instance_id"))
    rows = queryset.order_by("corpus__name", "setup", "position", "id").values_list(
        "id", "anchor_1", "anchor_2", "sentence_1", "sentence_2", "correct_order", "stel_id", "published_votes",
        "component__name", "corpus_id", "setup", "status", "generation_run_id",
    )
    return pd.DataFrame.from_records(list(rows), columns=[
        "instance_id", "anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2", "correct_order", "id",
        "published_votes", "style_type", "corpus_id", "setup", "status", "generation_run_id",
    ])


def annotated_votes(*, instance_ids: list[int], study: Study | None) -> tuple[dict[int, int], list[Study]]:
    """Correct votes among the first k valid responses, for instances whose annotation is complete.

    With `study` only that study counts; otherwise every study showing the instances, later studies winning."""
    if study is not None:
        studies = [study]
    else:
        showing = Study.objects.filter(items__instance_id__in=instance_ids).distinct()
        studies = list(showing.order_by("created_at", "id"))
    wanted = set(instance_ids)
    votes: dict[int, int] = {}
    used: list[Study] = []
    for each in studies:
        items = selectors.items_frame(study_id=each.pk)
        items = items[items["instance_id"].isin(wanted)]
        if items.empty:
            continue
        responses = selectors.responses_frame(study_id=each.pk)
        first_k = first_k_responses(responses=responses, k=each.annotators_per_item)
        per_item = instance_votes(first_k=first_k, items=items, k=each.annotators_per_item, m=each.min_correct)
        complete = per_item[per_item["complete"] & (per_item["correct_answer"] != "")]
        if not complete.empty:
            used.append(each)
        votes.update(dict(zip(complete["instance_id"].astype(int), complete["n_correct"].astype(int), strict=True)))
    return votes, used


def _atomic_write(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _write_stel_tsv(frame: pd.DataFrame, path: Path) -> None:
    table = pd.DataFrame({
        "Anchor 1": frame["anchor_1"], "Anchor 2": frame["anchor_2"], "Alternative 1.1": frame["alternative_1_1"],
        "Alternative 1.2": frame["alternative_1_2"], "Correct Alternative": frame["correct_alternative"],
        "ID": frame["id"], "# Votes out of 5 for Correct Alternative": frame["votes_text"],
        "style type": frame["style_type"],
    }, columns=STEL_COLUMNS)
    table.index = range(len(table))
    # pandas' writer is how STEL produced its files: same quoting, leading unnamed index column, "\n" endings.
    _atomic_write(path, lambda tmp: table.to_csv(tmp, sep="\t", lineterminator="\n", encoding="utf-8"))


def _write_jsonl(frame: pd.DataFrame, path: Path) -> None:
    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            for index, row in enumerate(frame.itertuples(index=False)):
                record = {"index": index, "anchor_1": row.anchor_1, "anchor_2": row.anchor_2,
                          "alternative_1_1": row.alternative_1_1, "alternative_1_2": row.alternative_1_2,
                          "correct_alternative": int(row.correct_alternative), "id": row.id,
                          "votes": None if row.votes < 0 else int(row.votes), "style_type": row.style_type}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")

    _atomic_write(path, write)


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    votes = [None if v < 0 else int(v) for v in frame["votes"]]
    table = pa.table({
        "index": pa.array(range(len(frame)), pa.int64()),
        **{name: pa.array(frame[name].tolist(), pa.string()) for name in
           ("anchor_1", "anchor_2", "alternative_1_1", "alternative_1_2")},
        "correct_alternative": pa.array(frame["correct_alternative"].tolist(), pa.int8()),
        "id": pa.array(frame["id"].tolist(), pa.string()),
        "votes": pa.array(votes, pa.int16()),
        "style_type": pa.array(frame["style_type"].tolist(), pa.string()),
    }, schema=PARQUET_SCHEMA)
    _atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


WRITERS = {"stel-tsv": _write_stel_tsv, "jsonl": _write_jsonl, "parquet": _write_parquet}


def card_paths(out: Path) -> tuple[Path, Path]:
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.card.json"), out.with_name(f"{stem}.card.md")


def benchmark_export(
    *,
    fmt: str,
    out: Path,
    corpus: str = "",
    component: str = "",
    setup: str = "",
    status: str = "all",
    study_slug: str = "",
    created_by: str = "",
) -> BenchmarkExport:
    if fmt not in FORMATS:
        raise ApplicationError(f"format '{fmt}' must be one of {', '.join(FORMATS)}", code="invalid_format")
    if status not in STATUSES:
        raise ApplicationError(f"status '{status}' must be one of {', '.join(STATUSES)}", code="invalid_status")
    out = Path(out).resolve()
    if out.is_dir():
        raise ApplicationError(f"Out: {out} is a directory; give a file name", code="invalid_out", field="out")
    study = selectors.study_get(slug=study_slug) if study_slug else None
    frame = _instances(corpus=corpus, component=component, setup=setup, status=status, study=study)
    if frame.empty:
        raise ApplicationError("no task instances match the export's filters", code="nothing_to_export", status=404)
    votes, vote_studies = annotated_votes(instance_ids=frame["instance_id"].astype(int).tolist(), study=study)
    annotated = frame["instance_id"].map(votes)
    published = frame["published_votes"].astype("Float64")
    combined = annotated.astype("Float64").fillna(published).fillna(-1).astype(int)
    frame = frame.assign(
        votes=combined, votes_text=[("" if v < 0 else str(v)) for v in combined],
        correct_alternative=(frame["correct_order"] != "S1-S2").astype(int) + 1,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    WRITERS[fmt](frame, out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()

    params = {"format": fmt, "corpus": corpus, "component": component, "setup": setup, "status": status,
              "study": study_slug}
    counts = {
        "rows": len(frame),
        "per_component": {str(k): int(v) for k, v in frame.groupby("style_type").size().items()},
        "per_setup": {str(k): int(v) for k, v in frame.groupby("setup").size().items()},
        "per_status": {str(k): int(v) for k, v in frame.groupby("status").size().items()},
        "with_votes": int((frame["votes"] >= 0).sum()),
        "votes_from_annotations": int(annotated.notna().sum()),
        "votes_published": int((annotated.isna() & published.notna()).sum()),
    }
    filter_run = _latest_filter(study=study, vote_studies=vote_studies)
    card = _card(frame=frame, out=out, fmt=fmt, params=params, counts=counts, digest=digest, filter_run=filter_run,
                 vote_studies=vote_studies)
    json_path, md_path = card_paths(out)
    _atomic_write(json_path, lambda tmp: tmp.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n",
                                                        encoding="utf-8"))
    _atomic_write(md_path, lambda tmp: tmp.write_text(_markdown(card), encoding="utf-8"))
    with transaction.atomic():
        export = BenchmarkExport.objects.create(
            path=str(out), format=fmt, card_path=str(json_path), params=params, counts=counts, n_rows=len(frame),
            sha256=digest, study=study, filter_run=filter_run, created_by=created_by,
        )
    return export


def _latest_filter(*, study: Study | None, vote_studies: list[Study]) -> FilterRun | None:
    studies = [study] if study is not None else vote_studies
    if not studies:
        return None
    return FilterRun.objects.filter(study__in=studies).order_by("-created_at", "-id").first()


def reproduce_command(params: dict[str, Any], out: Path) -> str:
    parts = ["python", "manage.py", "export_benchmark", "--format", params["format"]]
    for key in ("corpus", "component", "setup", "study"):
        if params.get(key):
            parts += [f"--{key}", params[key]]
    parts += ["--status", params["status"], "--out", str(out)]
    return shlex.join(parts)


def _card(
    *, frame: pd.DataFrame, out: Path, fmt: str, params: dict[str, Any], counts: dict[str, Any], digest: str,
    filter_run: FilterRun | None, vote_studies: list[Study],
) -> dict[str, Any]:
    corpora = Corpus.objects.filter(pk__in=[int(i) for i in frame["corpus_id"].unique()]).select_related("component")
    runs = GenerationRun.objects.filter(pk__in=[int(i) for i in frame["generation_run_id"].dropna().unique()])
    agreement: dict[str, Any] = {}
    if filter_run is not None:
        agreement = {key: filter_run.statistics.get(key) for key in (
            "fleiss_kappa", "fleiss_kappa_ci", "krippendorff_alpha", "krippendorff_alpha_ci", "majority_accuracy",
            "components")}
        agreement["source"] = f"filter run #{filter_run.pk}"
    elif vote_studies:
        latest = AgreementRun.objects.filter(study__in=vote_studies, computed_at__isnull=False).first()
        if latest is not None:
            agreement = {key: latest.result.get(key) for key in (
                "fleiss_kappa", "fleiss_kappa_ci", "krippendorff_alpha", "krippendorff_alpha_ci", "majority_accuracy")}
            agreement["source"] = f"agreement run #{latest.pk}"
    return {
        "file": out.name,
        "format": fmt,
        "sha256": digest,
        "created_at": timezone.now().isoformat(timespec="seconds"),
        "selection": params,
        "counts": counts,
        "sources": [{"corpus": c.name, "component": c.component.name, "source": c.source, "licence": c.licence,
                     "import_format": c.import_format,
                     **({"built_from_rewrites": c.import_params} if c.import_params.get("builder") == "rewrites"
                        else {})} for c in corpora],
        "generation": [{"corpus_id": r.corpus_id, "setup": r.setup, "seed": r.seed, "params": r.params}
                       for r in runs.order_by("id")],
        "annotation": {
            "studies": [{"slug": s.slug, "k": s.annotators_per_item, "min_correct": s.min_correct}
                        for s in vote_studies],
            "votes": "number of correct answers among the first k valid responses (screen-failed participants "
                     "excluded); imported STEL instances keep their published votes; empty when not annotated",
        },
        "filter": None if filter_run is None else {
            "filter_run": filter_run.pk, "study": filter_run.study.slug,
            "rule": filter_run.statistics.get("rule"), "min_correct": filter_run.min_correct,
            "k": filter_run.annotators_per_item, "balance": filter_run.balance, "seed": filter_run.seed,
            "validated": filter_run.n_validated, "rejected": filter_run.n_rejected,
            "balanced_away": filter_run.n_balanced_away, "date": filter_run.created_at.isoformat(timespec="seconds"),
        },
        "agreement": agreement,
        "seed": None if filter_run is None else filter_run.seed,
        "columns": STEL_COLUMNS if fmt == "stel-tsv" else ["index", *PLAIN_FIELDS],
        "correct_alternative": "1 = order S1-S2 (Alternative 1.1 goes with Anchor 1), 2 = order S2-S1",
        "command": reproduce_command(params, out),
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _writing_signal_lines(params: dict[str, Any]) -> list[str]:
    """What the rewrites' writing signals flagged and what was done with the flagged rewrites (counts)."""
    signals = params.get("writing_signals") or {}
    if not signals.get("rewrites"):
        return []
    telemetry = signals.get("telemetry", {})
    lines = [f"  - Writing telemetry: {signals['rewrites']} rewrites, {telemetry.get('consistent', 0)} with consistent "
             f"telemetry, {telemetry.get('inconsistent', 0)} inconsistent, {telemetry.get('none', 0)} without."]
    if not signals.get("computed_at"):
        return [*lines, "  - Writing signals were not measured."]
    flagged = signals.get("flagged", {})
    excluded = params.get("exclude_flagged")
    done = (f"{flagged.get('accepted', 0)} accepted, {flagged.get('rejected', 0)} rejected, "
            f"{flagged.get('pending', 0)} pending by the reviewers")
    lines.append(f"  - Writing signals flagged {flagged.get('rewrites', 0)} rewrite(s) ({done}); "
                 + (f"{params.get('excluded_flagged', 0)} accepted flagged rewrite(s) left out of this corpus "
                    f"(flagged by {', '.join(excluded)})." if excluded else "flagged rewrites were not left out."))
    for name, outcome in signals.get("by_signal", {}).items():
        label = signals.get("labels", {}).get(name, name)
        lines.append(f"    - {label}: {outcome['rewrites']} ({outcome['accepted']} accepted, {outcome['rejected']} "
                     f"rejected, {outcome['pending']} pending"
                     + (f", {outcome['excluded_from_corpus']} left out)" if excluded else ")"))
    return lines


def _markdown(card: dict[str, Any]) -> str:
    counts = card["counts"]
    lines = [f"# Dataset card: {card['file']}", "",
             f"- Format: {card['format']}; rows: {counts['rows']}; sha256: `{card['sha256']}`",
             f"- Created: {card['created_at']}",
             f"- Selection: {', '.join(f'{k}={v}' for k, v in card['selection'].items() if v) or 'all'}",
             "", "## Counts per component", "", "| component | instances |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in counts["per_component"].items()]
    lines += ["", f"Per setup: {counts['per_setup']}; per status: {counts['per_status']}; with votes: "
              f"{counts['with_votes']} ({counts['votes_from_annotations']} from annotations, "
              f"{counts['votes_published']} published).", "", "## Sources and licences", ""]
    lines += [f"- **{s['corpus']}** ({s['component']}, {s['import_format']}): {s['source'] or '—'}. "
              f"Licence: {s['licence'] or 'not recorded'}" for s in card["sources"]]
    for built in (s for s in card["sources"] if s.get("built_from_rewrites")):
        params = built["built_from_rewrites"]
        lines.append(f"  - {built['corpus']} was built from the accepted rewrites of study `{params['study']}` "
                     f"({params['accepted_rewrites']} accepted; references: {params['references']}; splits "
                     f"{params['splits']} by source, seed {params['seed']}); each pair's metadata names its "
                     "response, writer and review, and a STEL ID names the source item and reference (`src#n`).")
        review = params.get("review") or {}
        if review.get("statuses"):
            lines.append(f"  - Review: {review['statuses']} by {len(review.get('reviewers', []))} reviewer(s); "
                         f"rejection reasons {review.get('rejection_reasons') or {}}.")
        if params.get("source_filters"):
            lines.append(f"  - Sources were filtered before writing: {params['source_filters']}.")
        lines += _writing_signal_lines(params)
    lines += ["", "## Filter", ""]
    if card["filter"]:
        f = card["filter"]
        lines.append(f"- {f['rule']} (filter run #{f['filter_run']} on study `{f['study']}`, {f['date']}); "
                     f"balanced: {f['balance']}; seed: {f['seed']}; validated {f['validated']}, rejected "
                     f"{f['rejected']}, balanced away {f['balanced_away']}")
    else:
        lines.append("- No filter run: these are unvalidated candidates (or a published benchmark as imported).")
    agreement = card["agreement"]
    if agreement:
        lines += ["", "## Agreement", "",
                  f"- Fleiss' kappa {_fmt(agreement.get('fleiss_kappa'))} (95% CI "
                  f"{_fmt((agreement.get('fleiss_kappa_ci') or {}).get('low'))}–"
                  f"{_fmt((agreement.get('fleiss_kappa_ci') or {}).get('high'))}), Krippendorff's alpha "
                  f"{_fmt(agreement.get('krippendorff_alpha'))}, majority accuracy "
                  f"{_fmt(agreement.get('majority_accuracy'))} ({agreement.get('source')})"]
    lines += ["", "## Generation", ""]
    lines += [f"- corpus #{g['corpus_id']} {g['setup']} seed {g['seed']}" for g in card["generation"]] or ["- —"]
    lines += ["", "## Reproduce", "", "```", card["command"], "```", ""]
    return "\n".join(lines)
