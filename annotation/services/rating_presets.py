"""Rating studies of rewrites: GYAFC's and Pauli et al.'s scales as presets, and the items of a Likert or ranking
study built from a file of system outputs (source, rewrite) or (source, several outputs). The presets' questions and
descriptions are the product's texts (annotation.services.product_texts): `study_create` stores them in the study's
language."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.error_codes import (
    DUPLICATE_OUTPUT,
    INVALID_KIND,
    INVALID_PRESET,
    MISSING_FIELD,
    NO_REWRITES,
    NOT_A_REWRITE_STUDY,
    TOO_FEW_OUTPUTS,
)
from annotation.models import ItemKind, Study
from annotation.services.product_texts import GYAFC_RANKING_DESCRIPTION, PAULI_DESCRIPTION, QUESTION_PRESETS
from annotation.services.rewrite_corpus import accepted_rewrites
from core.error_codes import INVALID
from core.errors import ApplicationError
from core.pseudonyms import pseudonym
from tasks.error_codes import DUPLICATE_ID, EMPTY_FILE, EMPTY_TEXT, FILE_NOT_FOUND, INVALID_ENCODING, MISSING_COLUMNS
from tasks.services.parsers import records_read

# kind → what the preset sets; a preset that has no form of a kind refuses it.
RATING_PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # Rao & Tetreault 2018: three scales (5 judgments per rewrite) and an overall ranking of system outputs,
    # reported as each system's mean rank (scoring.ranking.ranking_summary).
    "gyafc": {
        ItemKind.LIKERT: {"questions": QUESTION_PRESETS["gyafc"], "annotators_per_item": 5},
        ItemKind.RANKING: {"task_description": GYAFC_RANKING_DESCRIPTION, "annotators_per_item": 5},
    },
    # Pauli et al. 2025: style strength and content preservation, 5-point scales, 3 raters per pair.
    "pauli": {
        ItemKind.LIKERT: {"questions": QUESTION_PRESETS["pauli"], "annotators_per_item": 3,
                          "task_description": PAULI_DESCRIPTION},
    },
}
META = ("id", "source", "source_id", "reference", "target_style")


def rating_preset_get(*, preset: str, kind: str) -> dict[str, Any]:
    if preset not in RATING_PRESETS:
        raise ApplicationError(f"Preset must be one of {sorted(RATING_PRESETS)}, not {preset!r}.",
                               code=INVALID_PRESET, field="preset")
    if kind not in RATING_PRESETS[preset]:
        kinds = sorted(str(k) for k in RATING_PRESETS[preset])
        raise ApplicationError(f"preset {preset!r} has no {kind} form (it has: {', '.join(kinds)}).",
                               code=INVALID_PRESET)
    return dict(RATING_PRESETS[preset][kind])


def rating_records_read(*, path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """The (line, record) pairs of a CSV/TSV/JSONL file of system outputs (empty cells are absent values)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ApplicationError(f"Outputs: file {path} not found.", code=FILE_NOT_FOUND,
                               field="outputs") from None
    except UnicodeDecodeError as exc:
        raise ApplicationError(f"{path}: not valid UTF-8 ({exc.reason})", code=INVALID_ENCODING) from None
    delimited = path.suffix.lower() in {".csv", ".tsv", ".tab"}  # empty cells are absent values there
    records = [
        (number, {k: v for k, v in record.items() if v not in (None, "")} if delimited else record)
        for number, record in records_read(
            path, text, unknown_type=f"{path}: outputs are read from .csv, .tsv or .jsonl files, not "
                                     f"'{path.suffix.lower()}'")
    ]
    if not records:
        raise ApplicationError(f"{path}: no outputs", code=EMPTY_FILE)
    return records


def _outputs_of(record: dict[str, Any], where: str) -> dict[str, str]:
    """{system: text}: `rewrite` (+ `system`) for a long row, an `outputs` object, or every non-meta column."""
    if "rewrite" in record:
        return {str(record.get("system") or ""): str(record["rewrite"]).strip()}
    if isinstance(record.get("outputs"), dict):
        outputs = record["outputs"]
    else:
        outputs = {k: v for k, v in record.items() if k not in (*META, "system")}
    if not outputs:
        raise ApplicationError(f"{where}: no 'rewrite' and no system output columns", code=MISSING_COLUMNS)
    return {str(system): str(text).strip() for system, text in outputs.items()}


def rating_items_read(*, path: str | Path, kind: str) -> list[dict[str, Any]]:
    """Likert: one item per (source, output); ranking: one item per source with its outputs (at least 2).

    Long rows (`id, source, rewrite[, system, source_id]`) are grouped into one ranking item by `source_id` (by the
    source text when absent); wide rows (`id, source`, then one column per system) are one source each."""
    path = Path(path)
    if kind not in (ItemKind.LIKERT, ItemKind.RANKING):
        raise ApplicationError(f"Outputs build likert or ranking studies, not {kind}.", code=INVALID_KIND,
                               field="outputs")
    return rating_items_build(records=rating_records_read(path=path), kind=kind, where=str(path))


def rating_items_build(*, records: list[tuple[int, Any]], kind: str, where: str = "Outputs",
                       unit: str = "line") -> list[dict[str, Any]]:
    """`rating_items_read` on records already read: a file's (line, record) pairs, or the API body's rows."""
    path = where
    if kind not in (ItemKind.LIKERT, ItemKind.RANKING):
        raise ApplicationError(f"Outputs build likert or ranking studies, not {kind}.", code=INVALID_KIND,
                               field="outputs")
    if not records:
        raise ApplicationError(f"{where}: no outputs", code=EMPTY_FILE, field="outputs")
    groups: dict[str, dict[str, Any]] = {}
    likert: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}
    for number, record in records:
        where = f"{path}, {unit} {number}"
        source, row_id, outputs = _record_read(record, where)
        meta = {k: str(record[k]).strip() for k in ("reference", "target_style") if record.get(k)}
        long_row = "rewrite" in record
        for system, text in outputs.items():
            item_id = row_id if long_row else f"{row_id}:{system}"
            if item_id in seen_ids:
                raise ApplicationError(f"{where}: duplicate id {item_id!r} (also line {seen_ids[item_id]})",
                                       code=DUPLICATE_ID)
            seen_ids[item_id] = number
            likert.append({"id": item_id, "source": source, "rewrite": text, "system": system, **meta})
        key = str(record.get("source_id") or source) if long_row else row_id
        group = groups.setdefault(key, {"id": key if not long_row or record.get("source_id") else f"src-{len(groups)}",
                                        "source": source, "outputs": {}, "line": number, **meta})
        for system, text in outputs.items():
            name = system or "rewrite"
            if name in group["outputs"]:
                raise ApplicationError(f"{where}: system {name!r} twice for source {key!r} (first line "
                                       f"{group['line']})", code=DUPLICATE_OUTPUT)
            group["outputs"][name] = text
    if kind == ItemKind.LIKERT:
        return likert
    return _ranking_items(groups, path=path, unit=unit)


def _record_read(record: Any, where: str) -> tuple[str, str, dict[str, str]]:
    """One record's source, id and outputs (system → text), or the ApplicationError that names what is missing."""
    if not isinstance(record, dict):
        raise ApplicationError(f"{where}: expected an object", code=INVALID, field="outputs")
    source = str(record.get("source") or "").strip()
    row_id = str(record.get("id") or "").strip()
    if not source or not row_id:
        raise ApplicationError(f"{where}: missing {'source' if not source else 'id'}", code=MISSING_FIELD)
    outputs = _outputs_of(record, where)
    empty = [s or "rewrite" for s, text in outputs.items() if not text]
    if empty:
        raise ApplicationError(f"{where}: empty output for {', '.join(empty)}", code=EMPTY_TEXT)
    return source, row_id, outputs


def _ranking_items(groups: dict[str, dict[str, Any]], *, path: str, unit: str) -> list[dict[str, Any]]:
    """One ranking item per source, its outputs in the order they came; a source needs at least 2."""
    ranking = []
    for key, group in groups.items():
        if len(group["outputs"]) < 2:
            raise ApplicationError(f"{path}, {unit} {group['line']}: source {key!r} has {len(group['outputs'])} "
                                   f"output(s); a ranking needs at least 2", code=TOO_FEW_OUTPUTS)
        outputs = [{"id": f"o{i + 1}", "system": system, "text": text}
                   for i, (system, text) in enumerate(group["outputs"].items())]
        ranking.append({"id": group["id"], "source": group["source"], "outputs": outputs,
                        **{k: group[k] for k in ("reference", "target_style") if k in group}})
    return ranking


def rating_items_from_rewrite_study(*, study_slug: str, kind: str) -> list[dict[str, Any]]:
    """The accepted rewrites of a rewrite study as rating items: Likert, one per rewrite (`system` names its
    writer); ranking, one per source with its rewrites (at least 2)."""

    if kind not in (ItemKind.LIKERT, ItemKind.RANKING):
        raise ApplicationError(f"Outputs study: builds likert or ranking studies, not {kind}.", code=INVALID_KIND,
                               field="outputs_study")
    study = Study.objects.filter(slug=study_slug).first()
    if study is None or study.item_kind != ItemKind.REWRITE:
        raise ApplicationError(f"Outputs study: {study_slug!r} is not a rewrite study", code=NOT_A_REWRITE_STUDY,
                               field="outputs_study")
    groups: dict[str, list[Any]] = {}
    for response in accepted_rewrites(study=study):
        groups.setdefault(response.study_item.external_id, []).append(response)
    if not groups:
        raise ApplicationError(f"Outputs study: {study_slug!r} has no accepted rewrites", code=NO_REWRITES,
                               field="outputs_study")
    items: list[dict[str, Any]] = []
    for source_id, responses in groups.items():
        payload = responses[0].study_item.payload
        meta = {"source": payload.get("source", ""), "rewrite_study": study.slug,
                **({"target_style": payload["target_style"]} if payload.get("target_style") else {})}
        # The writer as a system: their keyed pseudonym, since items (and what they showed) leave in exports.
        outputs = [{"id": f"o{n}", "system": "writer:" + pseudonym(platform=r.participant.platform,
                                                                   external_id=r.participant.external_id),
                    "text": r.answer,
                    "response": r.pk} for n, r in enumerate(responses, start=1)]
        if kind == ItemKind.LIKERT:
            items.extend({"id": f"{source_id}#{o['id'][1:]}", "rewrite": o["text"], "system": o["system"],
                          "response": o["response"], **meta} for o in outputs)
        elif len(outputs) >= 2:
            items.append({"id": source_id, "outputs": outputs, **meta})
    if not items:
        raise ApplicationError(f"Outputs study: no source of {study_slug!r} has 2 accepted rewrites to rank",
                               code=TOO_FEW_OUTPUTS, field="outputs_study")
    return items
