"""Responses export: one row per answer, CSV or JSONL.

The `participant` column holds each person's keyed pseudonym (core.pseudonyms; re-keyed by a release `salt`), since
the export leaves the database. Raw platform ids come out only for an account holding the personal-data permission
(`raw_ids`), and every such export writes a row of the access log. The decisions CSV for a platform's bulk page keeps
raw ids (the platform matches its workers by them) and logs who exported it."""
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
from core.error_codes import NOT_FOUND, PERMISSION_DENIED
from core.errors import ApplicationError
from core.personal_data import can_see_personal_data, personal_data_access_log
from core.pseudonyms import pseudonym
from core.spreadsheets import spreadsheet_safe

FORMATS = ("csv", "jsonl")


def _csv_value(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return spreadsheet_safe(json.dumps(value, ensure_ascii=False, sort_keys=True))
    if value is None:
        return ""
    return spreadsheet_safe(value)  # participant ids and free text are chosen by anyone


def _participant_column(rows: Iterator[dict[str, Any]], *, raw_ids: bool, salt: str) -> Iterator[dict[str, Any]]:
    if raw_ids:
        yield from rows
        return
    cache: dict[tuple[str, str], str] = {}
    for row in rows:
        person = (row["platform"], row["participant"])
        if person not in cache:
            cache[person] = pseudonym(platform=person[0], external_id=person[1], salt=salt)
        yield {**row, "participant": cache[person]}


def responses_serialize(*, study: Study, fmt: str, raw_ids: bool = False, salt: str = "") -> Iterator[str]:
    """Chunks of the export (a header first for CSV), streamed so large studies never sit in memory. Participants
    are pseudonyms unless `raw_ids` (the doors check the permission and log the access: `responses_raw_ids_check`)."""
    if fmt not in FORMATS:
        raise ApplicationError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
    rows = _participant_column(response_export_rows(study=study), raw_ids=raw_ids, salt=salt)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_value(v) for k, v in row.items()})
            if buffer.tell() > 64_000:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()
    else:
        for row in rows:
            yield json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def responses_raw_ids_check(*, study: Study, user: Any, door: str, fmt: str) -> int:
    """A raw-id export by a person: refused without the personal-data permission, else written to the access log.
    The command line (door "cli") has no account: whoever runs it holds the server, so it is logged, not refused."""
    if fmt not in FORMATS:
        raise ApplicationError(f"Format must be one of {', '.join(FORMATS)}, not {fmt!r}.", field="format")
    if door != "cli" and not can_see_personal_data(user):
        raise ApplicationError("Raw ids: exporting participants' platform ids needs the personal-data permission "
                               "(core.view_personal_data); without it the export carries pseudonyms.",
                               code=PERMISSION_DENIED, status=403, field="raw_ids")
    people = study.participants.filter(responses__isnull=False).distinct().count()
    personal_data_access_log(user=user, door=door, what=f"responses export ({fmt}) with raw platform ids",
                             people=people, study_slug=study.slug)
    return people


def responses_export(*, slug: str, fmt: str, out: Path, raw_ids: bool = False, salt: str = "",
                     user: Any = None, door: str = "cli") -> dict[str, Any]:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug '{slug}'.", code=NOT_FOUND, status=404, field="study")
    if fmt not in FORMATS:
        raise ApplicationError(f"Format must be one of {FORMATS}, not {fmt!r}.", field="format")
    if not out.parent.exists():
        raise ApplicationError(f"Out: directory {out.parent} does not exist.", field="out")
    if raw_ids:
        responses_raw_ids_check(study=study, user=user, door=door, fmt=fmt)
    tmp = out.with_name(out.name + ".part")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        for chunk in responses_serialize(study=study, fmt=fmt, raw_ids=raw_ids, salt=salt):
            handle.write(chunk)
    tmp.replace(out)  # never leave a half-written export under the final name
    rows = study.responses.count()
    return {"study": slug, "format": fmt, "out": str(out), "rows": rows, "columns": EXPORT_COLUMNS,
            "participant_ids": "raw" if raw_ids else "pseudonyms", "salted": bool(salt) and not raw_ids}


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


def decisions_serialize(*, study: Study, fmt: str = "prolific", user: Any = None, door: str = "") -> str:
    """The approve / reject / return decisions of `participant_recommendations` as a CSV for the platform. It holds
    raw platform ids (the platform's bulk page matches its workers by them): a door names itself (`door`, and the
    `user` where there is one) so that the export is written to the access log."""
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
    if door:
        people = sum(1 for rec in recs if rec["platform"] != "imported" and (fmt == "prolific"
                                                                             or rec["platform"] == "mturk"))
        personal_data_access_log(user=user, door=door, what=f"decisions CSV ({fmt}) with raw platform ids",
                                 people=people, study_slug=study.slug)
    return buffer.getvalue()


def decisions_export(*, slug: str, fmt: str, out: Path) -> dict[str, Any]:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise ApplicationError(f"Study: no study with slug '{slug}'.", code=NOT_FOUND, status=404, field="study")
    if not out.parent.exists():
        raise ApplicationError(f"Out: directory {out.parent} does not exist.", field="out")
    text = decisions_serialize(study=study, fmt=fmt, door="cli")
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(out)
    rows = list(csv.reader(io.StringIO(text)))[1:]
    column = 2 if fmt == "prolific" else 5
    counts = {decision: sum(1 for row in rows if row[column] == decision)
              for decision in ("approve", "reject", "return")}
    return {"study": slug, "format": fmt, "out": str(out), "rows": len(rows), **counts}
