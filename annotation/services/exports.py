"""Raw-response export: one row per answer, CSV or JSONL."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotation.models import Study
from annotation.selectors import EXPORT_COLUMNS, response_export_rows
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
        raise ApplicationError(f"--study: no study with slug '{slug}'.", code="not_found", status=404)
    if fmt not in FORMATS:
        raise ApplicationError(f"--format must be one of {FORMATS}, not {fmt!r}.")
    if not out.parent.exists():
        raise ApplicationError(f"--out: directory {out.parent} does not exist.")
    tmp = out.with_name(out.name + ".part")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        for chunk in responses_serialize(study=study, fmt=fmt):
            handle.write(chunk)
    tmp.replace(out)  # never leave a half-written export under the final name
    rows = study.responses.count()
    return {"study": slug, "format": fmt, "out": str(out), "rows": rows, "columns": EXPORT_COLUMNS}
