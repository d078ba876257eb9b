"""benchmark_export: the selected instances written in a format, with the dataset card (JSON + Markdown), the
Croissant metadata and a version. Every check (format, selection, licences, where to write) comes before the first
byte is written: a refused export leaves nothing behind."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError
from scoring.error_codes import INVALID_FORMAT, INVALID_OUT, NOTHING_TO_EXPORT
from scoring.export.annotator_votes import VOTES_FORMATS, VOTES_TABLE, votes_frame, votes_path, votes_write
from scoring.export.card import CardContext, card_build, card_markdown
from scoring.export.croissant import croissant_build
from scoring.export.formats import (
    STEL_COLUMNS,
    ExportFormat,
    atomic_write,
    card_paths,
    croissant_path,
    file_facts,
    format_get,
    reproduce_command,
    row_columns,
    source_public,
    votes_column_facts,
)
from scoring.export.hub import hub_folder_check, hub_folder_replace, hub_readme
from scoring.export.licences import export_licences, hub_licence_ids
from scoring.export.selection import Selection, benchmark_frame, instances_frame, selection_check
from scoring.export.versions import manifest_of, version_next
from scoring.models import BenchmarkExport, FilterRun
from tasks.error_codes import INVALID_NAME
from tasks.models import Corpus

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,149}$")


def _json_write(path: Path, data: Any) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                                                  encoding="utf-8"))


def _out_check(spec: ExportFormat, out: Path) -> None:
    if spec.folder:
        hub_folder_check(out)
    elif out.is_dir():
        raise ApplicationError(f"Out: {out} is a directory; give a file name", code=INVALID_OUT, field="out")


def _latest_filter(*, studies: list[Any]) -> FilterRun | None:
    if not studies:
        return None
    return FilterRun.objects.filter(study__in=studies).order_by("-created_at", "-id").first()


def folder_digest(files: list[dict[str, Any]]) -> str:
    """A folder's checksum: the sha256 of its files' `sha256sum` listing (sorted by path)."""
    listing = "".join(f"{f['sha256']}  {f['path']}\n" for f in sorted(files, key=lambda f: f["path"]))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def export_check(*, fmt: str, selection: Selection, name: str, ids_only: bool) -> tuple[ExportFormat, Any, str]:
    """What can be refused before reading any row: the format, the selection's names, the benchmark's name."""
    spec = format_get(fmt)
    study = selection_check(selection)
    if ids_only and not spec.ids_only:
        raise ApplicationError(f"Ids only: the {spec.label} format holds the texts; the ids-only form is written as "
                               "jsonl, parquet or hub", code=INVALID_FORMAT, field="ids_only")
    name = name.strip() or selection.default_name()
    if not NAME.match(name):
        raise ApplicationError(f"Name: '{name}' must be 1–150 letters, digits, '.', '_' or '-', starting with a "
                               "letter or digit", code=INVALID_NAME, field="name")
    return spec, study, name


def export_selection_check(*, selection: Selection, study: Any, ids_only: bool) -> None:
    """For the doors that queue a job: something to export, and licences that allow it (no votes computed)."""
    frame = instances_frame(selection=selection, study=study)
    if frame.empty:
        raise ApplicationError("No task instances match this selection: nothing to export.",
                               code=NOTHING_TO_EXPORT)
    corpora = list(Corpus.objects.filter(pk__in=[int(i) for i in frame["corpus_id"].unique()]).order_by("name"))
    export_licences(corpora=corpora, ids_only=ids_only)


def benchmark_export(
    *,
    fmt: str,
    out: Path,
    corpus: str = "",
    component: str = "",
    setup: str = "",
    status: str = "all",
    study_slug: str = "",
    name: str = "",
    ids_only: bool = False,
    created_by: str = "",
    salt: str = "",
) -> BenchmarkExport:
    """`salt` re-keys the annotators' pseudonyms in the per-annotator votes table (a release that should not be
    joinable with another on annotators)."""
    selection = Selection(corpus=corpus, component=component, setup=setup, status=status, study=study_slug)
    spec, study, name = export_check(fmt=fmt, selection=selection, name=name, ids_only=ids_only)
    out = Path(out).resolve()
    _out_check(spec, out)
    frame, vote_studies = benchmark_frame(selection=selection, study=study)
    corpora = list(Corpus.objects.filter(pk__in=[int(i) for i in frame["corpus_id"].unique()])
                   .select_related("component").order_by("name"))
    licences = export_licences(corpora=corpora, ids_only=ids_only)
    manifest = manifest_of(frame)
    version, changelog = version_next(name=name, manifest=manifest)

    out.parent.mkdir(parents=True, exist_ok=True)
    target = out.with_name(f".{out.name}.{os.getpid()}.staging") if spec.folder else out
    if spec.folder:
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
    try:
        export = _write_all(spec=spec, out=out, target=target, frame=frame, selection=selection, study=study,
                            vote_studies=vote_studies, corpora=corpora, licences=licences, name=name,
                            version=version, changelog=changelog, manifest=manifest, ids_only=ids_only,
                            created_by=created_by, salt=salt)
    finally:
        if spec.folder and target.exists():
            shutil.rmtree(target)
    return export


def _votes_write(*, spec: ExportFormat, target: Path, frame: Any, studies: list[Any], salt: str,
                 files: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-annotator votes table beside the instances (appended to `files`); what the card says of it."""
    if spec.name not in VOTES_FORMATS:
        return {"published": False, "reason": f"the {spec.label} format holds the instances only",
                "not_published": [s.slug for s in studies]}
    votes, facts = votes_frame(frame=frame, studies=studies, salt=salt)
    if not facts["published"]:
        return {**facts, "reason": "no study of these votes publishes per-annotator labels" if studies
                else "no study's annotations gave these instances their votes"}
    path = votes_path(target, fmt=spec.name)
    votes_write(path, votes, fmt=spec.name)
    root = target if spec.folder else target.parent
    extra = {"config": VOTES_TABLE, "split": "train"} if spec.folder else {}
    files.append(file_facts(path, root=root, rows=len(votes), table=VOTES_TABLE, **extra))
    return {**facts, "file": files[-1]["path"]}


def _write_all(*, spec: ExportFormat, out: Path, target: Path, frame: Any, selection: Selection, study: Any,
               vote_studies: list[Any], corpora: list[Corpus], licences: list[dict[str, Any]], name: str,
               version: str, changelog: dict[str, Any], manifest: dict[str, Any], ids_only: bool,
               created_by: str, salt: str = "") -> BenchmarkExport:
    files = spec.write(frame, target, ids_only)
    # The card describes the named study even where no instance is complete yet (its collection is still a fact).
    card_studies = [study] if study is not None else vote_studies
    votes_facts = _votes_write(spec=spec, target=target, frame=frame, studies=card_studies, salt=salt, files=files)
    digest = folder_digest(files) if spec.folder else files[0]["sha256"]
    # Whether the pseudonyms were salted, never the salt: with the key it would re-link this release to others.
    params = {"format": spec.name, **selection.as_params(), "name": name, "ids_only": ids_only,
              **({"salted": True} if salt else {})}
    counts = {
        "rows": len(frame),
        "per_component": {str(k): int(v) for k, v in frame.groupby("style_type").size().items()},
        "per_setup": {str(k): int(v) for k, v in frame.groupby("setup").size().items()},
        "per_status": {str(k): int(v) for k, v in frame.groupby("status").size().items()},
        "per_split": {str(k): int(v) for k, v in frame.groupby("split").size().items()},
        "with_votes": int((frame["votes"] >= 0).sum()),
        "votes_from_annotations": int((frame["votes_source"] == "annotations").sum()),
        "votes_published": int((frame["votes_source"] == "published").sum()),
    }
    filter_run = _latest_filter(studies=[study] if study is not None else vote_studies)
    command = reproduce_command(params, out)
    created_at = timezone.now().isoformat(timespec="seconds")
    ctx = CardContext(frame=frame, fmt=spec.name, ids_only=ids_only, name=name, version=version,
                      changelog=changelog, params={**params, "created_by": created_by}, studies=card_studies,
                      filter_run=filter_run, corpora=corpora, files=files, command=command, created_at=created_at,
                      licences=licences, annotator_votes=votes_facts)
    header = {
        "name": name, "pretty_name": f"{name} (STEL-style benchmark)", "version": version, "file": out.name,
        "format": spec.name, "ids_only": ids_only, "sha256": digest, "created_at": created_at,
        "selection": selection.as_params(), "command": command, "counts": counts,
        "seed": None if filter_run is None else filter_run.seed,
        "columns": STEL_COLUMNS if spec.name == "stel-tsv" else row_columns(
            ids_only=ids_only, with_setup=spec.folder and not ids_only),
        "correct_alternative": "1 = order S1-S2 (Alternative 1.1 goes with Anchor 1), 2 = order S2-S1",
        "votes_column": votes_column_facts(
            fmt=spec.name, k_values=[each.annotators_per_item for each in vote_studies],
            published=bool((frame["votes_source"] == "published").any())),
        "sources": [{"corpus": c.name, "component": c.component.name, "source": source_public(c.source),
                     "licence": c.licence,
                     "attribution": c.attribution, "import_format": c.import_format,
                     **({"built_from_rewrites": c.import_params} if c.import_params.get("builder") == "rewrites"
                        else {})} for c in corpora],
    }
    card = card_build(ctx, header=header)
    # The card's earlier top-level keys, kept for readers of version-1 cards.
    card["filter"] = card["collection"]["filter"]
    card["generation"] = card["preprocessing"]["generation"]
    markdown = card_markdown(card)
    json_path, md_path = card_paths(target, folder=spec.folder)
    _json_write(json_path, card)
    if spec.folder:
        readme = hub_readme(card=card, markdown=markdown, files=files, licence_ids=hub_licence_ids(licences))
        atomic_write(md_path, lambda tmp: tmp.write_text(readme, encoding="utf-8"))
    else:
        atomic_write(md_path, lambda tmp: tmp.write_text(markdown, encoding="utf-8"))
    _json_write(croissant_path(target, folder=spec.folder), croissant_build(card=card, files=files,
                                                                            encoding=spec.encoding))
    if spec.folder:
        hub_folder_replace(target, out)
    with transaction.atomic():
        export = BenchmarkExport.objects.create(
            path=str(out), format=spec.name, card_path=str(card_paths(out, folder=spec.folder)[0]), name=name,
            version=version, changelog=changelog, manifest=manifest, ids_only=ids_only,
            licences=[f["licence"] or "" for f in licences], files=files, params=params, counts=counts,
            n_rows=len(frame), sha256=digest, study=study, filter_run=filter_run, created_by=created_by,
        )
    return export
