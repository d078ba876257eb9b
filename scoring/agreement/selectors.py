"""Reads for agreement, filtering and exports: long-format frames straight from the database.

Hot path (PostgreSQL): no per-row Python objects at all. Text columns with few distinct values (answers, component,
setup, …) are dictionary-coded in SQL, and every column comes back as ONE binary string built by
`string_agg(int8send(…))`, which numpy reads with `frombuffer`: 1,000,000 responses arrive as a handful of byte
strings. Other databases (the SQLite demo) fall back to a plain cursor.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from django.db import connection

from annotation.error_codes import UNKNOWN_STUDY
from annotation.models import Study
from core.errors import ApplicationError

RESPONSE_COLUMNS = ["response_id", "item_id", "participant_id", "question", "answer", "value", "is_correct",
                    "is_valid", "is_screening", "answered_at", "seconds"]
# Beyond this many distinct values a text column is read as text (dictionary coding would cost more than it saves).
MAX_DICTIONARY = 2000
SEND = {"i8": ("int8send", ">i8"), "i4": ("int4send", ">i4"), "f8": ("float8send", ">f8")}


def study_get(*, slug: str) -> Study:
    try:
        return Study.objects.get(slug=slug)
    except Study.DoesNotExist:
        raise ApplicationError(f"study '{slug}' does not exist", code=UNKNOWN_STUDY, status=404) from None


def _psycopg_cursor() -> Any:
    # PostgreSQL only: the SQLite demo never loads psycopg
    import psycopg

    connection.ensure_connection()
    # Django's cursors are client-side binding cursors, which cannot return binary results.
    return psycopg.Cursor(connection.connection)


def _dictionaries(table_sql: str, coded: dict[str, str], params: list[Any]) -> dict[str, list[str] | None]:
    """Distinct values of each coded column (a hash aggregate each); None for a column with too many to code."""
    values: dict[str, list[str] | None] = {}
    with connection.cursor() as cursor:
        for name, expr in coded.items():
            cursor.execute(f"SELECT DISTINCT ({expr})::text FROM {table_sql} LIMIT {MAX_DICTIONARY + 1}", params)
            found = sorted(str(row[0]) for row in cursor.fetchall())
            values[name] = None if len(found) > MAX_DICTIONARY else found
    return values


def _binary_frame(
    table_sql: str, params: list[Any], numeric: dict[str, tuple[str, str]], coded: dict[str, str],
    text: dict[str, str] | None = None,
) -> pd.DataFrame | None:
    """Columns of `SELECT … FROM table_sql`: `numeric` {name: (sql, kind)}, `coded` {name: text sql} (decoded
    through a dictionary of distinct values), `text` {name: text sql} (many distinct values: read as text)."""
    dictionaries = _dictionaries(table_sql, coded, params)
    dictionaries.update({name: None for name in (text or {})})
    coded = {**coded, **(text or {})}
    parts, kinds, query_params = ["count(*)"], [], []
    for name, (expr, kind) in numeric.items():
        parts.append(f"string_agg({SEND[kind][0]}({expr}), ''::bytea)")
        kinds.append((name, SEND[kind][1], None))
    text_columns = []
    for name, expr in coded.items():
        values = dictionaries[name]
        if values is None:
            text_columns.append((name, expr))
            continue
        parts.append(f"string_agg(int4send((array_position(%s::text[], ({expr})::text) - 1)::int4), ''::bytea)")
        query_params.append(values)
        kinds.append((name, ">i4", values))
    # Text columns with many distinct values ride in the same query (same scan order), joined by chr(31).
    parts += [f"string_agg(({expr})::text, chr(31))" for _, expr in text_columns]
    sql = f"SELECT {', '.join(parts)} FROM {table_sql}"
    with _psycopg_cursor() as cursor:
        cursor.execute(sql, [*query_params, *params], binary=True)
        row = cursor.fetchone()
    count = int(row[0])
    frame: dict[str, Any] = {}
    for (name, dtype, values), blob in zip(kinds, row[1:1 + len(kinds)], strict=True):
        array = np.frombuffer(blob, dtype=dtype) if blob is not None else np.zeros(0, dtype=dtype)
        array = array.astype(np.dtype(dtype).newbyteorder("="))
        if values is not None:
            # Categorical straight from the codes: no per-row string objects for a million answers.
            array = pd.Categorical.from_codes(array, categories=values) if len(values) else \
                np.full(count, "", dtype=object)
        frame[name] = array
    for (name, _), text in zip(text_columns, row[1 + len(kinds):], strict=True):
        values = text.split("\x1f") if text is not None else []
        if len(values) != count:  # a text held the separator itself: the caller reads row by row instead
            return None
        frame[name] = np.asarray(values, dtype=object)
    return pd.DataFrame(frame)


def _plain_frame(sql: str, params: list[Any], columns: list[str]) -> pd.DataFrame:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return pd.DataFrame.from_records(rows, columns=columns)


def responses_frame(*, study_id: int, question: str | None = None) -> pd.DataFrame:
    """Every response of the study (valid or not, items and screening questions) in long format.

    `answered_at` is seconds since the epoch, so "first k in time order" is a numeric sort.
    """
    where = "annotation_response WHERE study_id = %s"
    params: list[Any] = [study_id]
    if question:
        where += " AND (question = %s OR is_screening)"
        params.append(question)
    binary = None
    if connection.vendor == "postgresql":
        binary = _binary_frame(
            where, params,
            numeric={
                "response_id": ("id", "i8"), "item_id": ("coalesce(study_item_id, -1)", "i8"),
                "participant_id": ("participant_id", "i8"), "value": ("coalesce(value, 'NaN')", "f8"),
                # three flags in one column: is_valid, is_screening, is_correct (-1 unknown, 0, 1) + 1
                "flags": ("is_valid::int + 2 * is_screening::int + 4 * (coalesce(is_correct::int, -1) + 1)", "i4"),
                "answered_at": ("extract(epoch from answered_at)::float8", "f8"),
                # the server's measure; the client's only where the server has none (imported annotations)
                "seconds": ("coalesce(server_seconds, seconds, 'NaN')", "f8"),
            },
            coded={"answer": "answer", "question": "question"},
        )
    if connection.vendor == "postgresql" and binary is not None:
        frame = binary
        if frame.empty:
            return _empty_responses()
        flags = frame.pop("flags").to_numpy()
        correct = (flags >> 2) - 1
        return frame.assign(
            is_correct=np.where(correct < 0, np.nan, correct).astype("float64"),
            is_valid=(flags & 1).astype(bool), is_screening=(flags & 2).astype(bool),
        )[RESPONSE_COLUMNS]
    raw = _plain_frame(
        "SELECT id, study_item_id, participant_id, question, answer, value, is_correct, is_valid, is_screening, "
        f"answered_at, coalesce(server_seconds, seconds) FROM {where}", params,
        ["response_id", "item_id", "participant_id", "question", "answer", "value", "is_correct", "is_valid",
         "is_screening", "answered_at", "seconds"],
    )
    if raw.empty:
        return _empty_responses()
    return pd.DataFrame({
        "response_id": raw["response_id"].astype("int64"),
        "item_id": raw["item_id"].fillna(-1).astype("int64"),
        "participant_id": raw["participant_id"].astype("int64"),
        "question": raw["question"].astype(str), "answer": raw["answer"].astype(str),
        "value": pd.to_numeric(raw["value"], errors="coerce").astype("float64"),
        "is_correct": pd.to_numeric(raw["is_correct"], errors="coerce").astype("float64"),
        "is_valid": raw["is_valid"].astype(bool), "is_screening": raw["is_screening"].astype(bool),
        # Seconds since the epoch whatever unit pandas parses into (microseconds from SQLite's text timestamps,
        # nanoseconds elsewhere): dividing the raw integers by 1e9 dated SQLite responses 1970-01-21.
        "answered_at": (pd.to_datetime(raw["answered_at"], utc=True, format="mixed")
                        - pd.Timestamp(0, tz="UTC")).dt.total_seconds(),
        "seconds": pd.to_numeric(raw["seconds"], errors="coerce").astype("float64"),
    })


def _empty_responses() -> pd.DataFrame:
    return pd.DataFrame({
        "response_id": pd.Series(dtype="int64"), "item_id": pd.Series(dtype="int64"),
        "participant_id": pd.Series(dtype="int64"), "question": pd.Series(dtype=object),
        "answer": pd.Series(dtype=object), "value": pd.Series(dtype="float64"),
        "is_correct": pd.Series(dtype="float64"), "is_valid": pd.Series(dtype=bool),
        "is_screening": pd.Series(dtype=bool), "answered_at": pd.Series(dtype="float64"),
        "seconds": pd.Series(dtype="float64"),
    })


ITEMS_FROM = (
    "annotation_studyitem si "
    "LEFT JOIN tasks_taskinstance ti ON ti.id = si.instance_id "
    "LEFT JOIN tasks_stylecomponent c1 ON c1.id = si.component_id "
    "LEFT JOIN tasks_stylecomponent c2 ON c2.id = ti.component_id "
    "WHERE si.study_id = %s"
)
ITEM_TEXT = {
    "external_id": "si.external_id", "kind": "si.kind", "component": "COALESCE(c1.name, c2.name, '')",
    "setup": "COALESCE(ti.setup, si.kind)", "correct_answer": "si.correct_answer",
    "family": "COALESCE(NULLIF(si.family, ''), ti.family, '')",
}
ITEM_NUMBERS = {
    "item_id": ("si.id", "i8"), "position": ("CAST(si.position AS BIGINT)", "i8"),
    "instance_id": ("COALESCE(ti.id, -1)", "i8"),
    # closed early by adaptive collection (1) or not (0): such an item is decided on the answers it has
    "is_closed": ("CAST(CASE WHEN si.is_closed THEN 1 ELSE 0 END AS BIGINT)", "i8"),
}


def items_frame(*, study_id: int) -> pd.DataFrame:
    """The study's items with their component, setup, correct answer and the instance they show."""
    frame = None
    if connection.vendor == "postgresql":
        unique = {"external_id", "family"}  # one per item: no point coding them
        frame = _binary_frame(ITEMS_FROM, [study_id], numeric=ITEM_NUMBERS,
                              coded={k: v for k, v in ITEM_TEXT.items() if k not in unique},
                              text={k: v for k, v in ITEM_TEXT.items() if k in unique})
    if frame is None:
        names = [*ITEM_NUMBERS, *ITEM_TEXT]
        exprs = [expr for expr, _ in ITEM_NUMBERS.values()] + list(ITEM_TEXT.values())
        frame = _plain_frame(f"SELECT {', '.join(exprs)} FROM {ITEMS_FROM}", [study_id], names)
    if frame.empty:
        frame = pd.DataFrame({name: pd.Series(dtype="int64") for name in ITEM_NUMBERS}
                             | {name: pd.Series(dtype=object) for name in ITEM_TEXT})
    for name, (_, kind) in ITEM_NUMBERS.items():
        frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64" if kind == "f8" else "int64")
    for name in ITEM_TEXT:
        values = np.array(frame[name], dtype=object)  # a writable copy of plain strings (few rows)
        values[pd.isna(values)] = ""
        frame[name] = values
    frame["is_closed"] = frame["is_closed"].astype(bool)
    columns = ["item_id", "external_id", "position", "kind", "component", "setup", "correct_answer", "family",
               "instance_id", "is_closed"]
    return frame[columns].sort_values(["position", "item_id"], kind="stable").reset_index(drop=True)


def participants_frame(*, study_id: int) -> pd.DataFrame:
    frame = _plain_frame("SELECT id, external_id, platform, excluded FROM annotation_participant WHERE study_id = %s",
                         [study_id], ["participant_id", "external_id", "platform", "excluded"])
    return frame.astype({"participant_id": "int64", "excluded": bool})
