"""Raw-response export: one row per answer, CSV or JSONL."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotation.models import Study
from annotation.selectors import EXPORT_COLUMNS, participant_recommendations, response_export_rows
from annotation.services.review import review_recommendations
from annotation.services.writing_signals.services import signal_recommendations
from core.error_codes import NOT_FOUND
from core.errors import ApplicationError
from core.spreadsheets import spreadsheet_safe

FORMATS = ("csv", "jsonl")


def _csv_value(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return spreadsheet_safe(json.dumps(value, ensure_ascii=False, sort_keys=True))
    if value is None:
        return ""
    return spreadsheet_safe(value)  # participant ids and free text are chosen by anyone


def responses_serialize(*, study: Study, fmt: str) -> Iterator[str]:
    """Chunks of the export (a header first for CSV), streamed so large studies never sit in memory."""
    if fmt not in FORMATS:
        raise ApplicationError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in response_export_rows(study=study):
            writer.writerow({k: _csv_value(v) for k, v in row.items()})
            if buffer.tell() > 64_000:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()
    else:
        for row in response_export_rows(study=study):
            yield json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def responses_export(*, slug: str, fmt: str, out: Path) -> dict[str, Any]:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug '{slug}'.", code=NOT_FOUND, status=404, field="study")
    if fmt not in FORMATS:
        raise ApplicationError(f"Format must be one of {FORMATS}, not {fmt!r}.", field="format")
    if not out.parent.exists():
        raise ApplicationError(f"Out: directory {out.parent} does not exist.", field="out")
    tmp = out.with_name(out.name + ".part")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        for chunk in responses_serialize(study=study, fmt=fmt):
            handle.write(chunk)
    tmp.replace(out)  # never leave a half-written export under the final name
    rows = study.responses.count()
    return {"study": slug, "format": fmt, "out": str(out), "rows": rows, "columns": EXPORT_COLUMNS}


# --- payment decisions -------------------------------------------------------------------------------------

DECISION_FORMATS = ("prolific", "mturk")
# Prolific's bulk actions take participant ids (and, for a rejection, a reason and a category); one row per
# participant. MTurk's batch-results upload takes one row per assignment: "x" under Approve, or a reason under
# Reject; an assignment with neither is left to the researcher (and to MTurk's auto-approval).
PROLIFIC_COLUMNS = ["participant_id", "submission_id", "decision", "reason", "rejection_category"]
MTURK_COLUMNS = ["AssignmentId", "WorkerId", "HITId", "Approve", "Reject", "Decision", "Reason"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """A cell a spreadsheet will not run: text starting with = + - @ (or a tab/CR) gets a leading apostrophe
    (OWASP, CSV injection). Participant ids and reasons can carry text a participant chose."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


REJECTION_NOTE = (
    "Attention checks are items with one obvious answer, mixed in with the others; failing two of them is grounds for "
    "rejection under Prolific's guidance on attention checks."
)


def rejection_category(rec: dict[str, Any]) -> str:
    return rec.get("rejection_category", "FAILED_CHECK") if rec["recommendation"] == "reject" else ""


def decision_reason(rec: dict[str, Any]) -> str:
    """The reason of a participant's decision; a rejection's is a message to the participant (Prolific asks for a
    real explanation). The decisions CSV and the platforms app's decisions both write it from here."""
    reason = "; ".join(rec["evidence"]) or "completed"
    if rec["recommendation"] == "reject":
        reason = f"You {reason}. {rec.get('rejection_note', REJECTION_NOTE)}"
    return reason


def study_recommendations(*, study: Study) -> list[dict[str, Any]]:
    """Every participant's recommendation with its evidence: attention checks and speed, the reviewers' decisions
    on rewrites, and the facts of the rewrites' writing signals (the API's participant list and the decisions)."""
    recs = review_recommendations(study=study, recs=participant_recommendations(study=study))
    return signal_recommendations(study=study, recs=recs)


def decisions_serialize(*, study: Study, fmt: str = "prolific") -> str:
    """The approve / reject / return decisions of `participant_recommendations` as a CSV for the platform."""
    if fmt not in DECISION_FORMATS:
        raise ApplicationError(f"Format must be one of {DECISION_FORMATS}, not {fmt!r}.",
                               details={"format": [str(fmt)[:32]]}, field="format")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    recs = study_recommendations(study=study)
    if fmt == "prolific":
        writer.writerow(PROLIFIC_COLUMNS)
        for rec in recs:
            if rec["platform"] == "imported":
                continue
            reason = decision_reason(rec)
            writer.writerow([csv_cell(v) for v in (
                rec["participant"], rec["submissions"][-1] if rec["submissions"] else "", rec["recommendation"],
                reason, rejection_category(rec),
            )])
    else:
        writer.writerow(MTURK_COLUMNS)
        for rec in recs:
            if rec["platform"] != "mturk":
                continue
            reason = decision_reason(rec)
            approve = "x" if rec["recommendation"] == "approve" else ""
            reject = reason if rec["recommendation"] == "reject" else ""
            for ref in rec["assignments"] or [{"assignment": "", "hit": ""}]:
                writer.writerow([csv_cell(v) for v in (
                    ref["assignment"], rec["participant"], ref["hit"], approve, reject, rec["recommendation"], reason,
                )])
    return buffer.getvalue()


def decisions_export(*, slug: str, fmt: str, out: Path) -> dict[str, Any]:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug '{slug}'.", code=NOT_FOUND, status=404, field="study")
    if not out.parent.exists():
        raise ApplicationError(f"Out: directory {out.parent} does not exist.", field="out")
    text = decisions_serialize(study=study, fmt=fmt)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(out)
    rows = list(csv.reader(io.StringIO(text)))[1:]
    column = 2 if fmt == "prolific" else 5
    counts = {decision: sum(1 for row in rows if row[column] == decision)
              for decision in ("approve", "reject", "return")}
    return {"study": slug, "format": fmt, "out": str(out), "rows": len(rows), **counts}
