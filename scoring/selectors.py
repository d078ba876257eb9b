"""Reads for agreement, filtering and exports: long-format frames straight from the database.

Hot paths read with PostgreSQL's COPY into pandas (no per-row ORM objects): 1,000,000 responses load in about
a second. Other databases (the SQLite demo) fall back to a plain cursor.
"""
from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
from django.db import connection

from annotation.models import Study
from core.errors import ApplicationError

RESPONSE_COLUMNS = [
    "response_id", "item_id", "participant_id", "question", "answer", "value", "is_correct", "is_valid",
    "is_screening", "answered_at", "seconds",
]
RESPONSE_DTYPES: dict[str, Any] = {
    "response_id": "int64", "item_id": "float64", "participant_id": "int64", "question": "string",
    "answer": "string", "value": "float64", "is_correct": "float64", "is_valid": "bool", "is_screening": "bool",
    "answered_at": "float64", "seconds": "float64",
}
ITEM_COLUMNS = [
    "item_id", "external_id", "position", "kind", "component", "setup", "correct_answer", "family", "instance_id",
    "corpus", "instance_position", "published_votes",
]


def _read_frame(sql: str, params: list[Any], columns: list[str]) -> pd.DataFrame:
    """Run `sql` and return its rows as a frame; on PostgreSQL through COPY … TO STDOUT (CSV)."""
    connection.ensure_connection()
    if connection.vendor == "postgresql":
        buffer = io.BytesIO()
        with connection.cursor() as cursor:
            raw = cursor.cursor  # the psycopg cursor: Django's wrapper has no COPY
            with raw.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)", params) as copy:
                for block in copy:
                    buffer.write(block)
        buffer.seek(0)
        if buffer.getbuffer().nbytes == 0:
            return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
        # Strings stay strings (keep_default_na=False): an answer "NA" or "" is an answer, not a missing value.
        frame = pd.read_csv(buffer, header=None, names=columns, dtype=str, keep_default_na=False, na_filter=False)
        return frame
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    frame = pd.DataFrame.from_records(rows, columns=columns)
    return frame.astype(str).replace({"None": ""})


def _to_float(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series.replace({"": np.nan, "t": 1.0, "f": 0.0, "True": 1.0, "False": 0.0}),
                         errors="coerce").astype("float64")


def _to_bool(series: pd.Series) -> pd.Series:
    return series.isin(["t", "True", "true", "1"])


def study_get(*, slug: str) -> Study:
    try:
        return Study.objects.get(slug=slug)
    except Study.DoesNotExist:
        raise ApplicationError(f"study '{slug}' does not exist", code="unknown_study", status=404) from None


def responses_frame(*, study_id: int, question: str | None = None) -> pd.DataFrame:
    """Every response of the study (valid or not, items and screening questions) in long format.

    `answered_at` is seconds since the epoch, so "first k in time order" is a numeric sort.
    """
    epoch = "extract(epoch from answered_at)" if connection.vendor == "postgresql" else "answered_at"
    sql = (
        "SELECT id, study_item_id, participant_id, question, answer, value, is_correct, is_valid, is_screening, "
        f"{epoch}, seconds FROM annotation_response WHERE study_id = %s"
    )
    params: list[Any] = [study_id]
    if question:
        sql += " AND (question = %s OR is_screening)"
        params.append(question)
    raw = _read_frame(sql, params, RESPONSE_COLUMNS)
    frame = pd.DataFrame({
        "response_id": pd.to_numeric(raw["response_id"]).astype("int64"),
        "item_id": pd.to_numeric(raw["item_id"].replace({"": "-1"})).astype("int64"),
        "participant_id": pd.to_numeric(raw["participant_id"]).astype("int64"),
        "question": raw["question"].astype(str),
        "answer": raw["answer"].astype(str),
        "value": _to_float(raw["value"]),
        "is_correct": _to_float(raw["is_correct"]),
        "is_valid": _to_bool(raw["is_valid"]),
        "is_screening": _to_bool(raw["is_screening"]),
        "answered_at": _answered_at(raw["answered_at"]),
        "seconds": _to_float(raw["seconds"]),
    })
    return frame


def _answered_at(series: pd.Series) -> pd.Series:
    numeric = pd.to_numeric(series, errors="coerce")
    if numeric.notna().all() or len(series) == 0:
        return numeric.astype("float64")
    # SQLite returns timestamps as text
    return pd.to_datetime(series, utc=True, format="mixed").astype("int64") / 1e9


def items_frame(*, study_id: int) -> pd.DataFrame:
    """The study's items with their component, setup, correct answer and the instance they show."""
    sql = (
        "SELECT si.id, si.external_id, si.position, si.kind, COALESCE(c1.name, c2.name, ''), "
        "COALESCE(ti.setup, si.kind), si.correct_answer, COALESCE(NULLIF(si.family, ''), ti.family, ''), "
        "ti.id, COALESCE(co.name, ''), ti.position, ti.published_votes "
        "FROM annotation_studyitem si "
        "LEFT JOIN tasks_taskinstance ti ON ti.id = si.instance_id "
        "LEFT JOIN tasks_stylecomponent c1 ON c1.id = si.component_id "
        "LEFT JOIN tasks_stylecomponent c2 ON c2.id = ti.component_id "
        "LEFT JOIN tasks_corpus co ON co.id = ti.corpus_id "
        "WHERE si.study_id = %s"
    )
    raw = _read_frame(sql, [study_id], ITEM_COLUMNS)
    frame = pd.DataFrame({
        "item_id": pd.to_numeric(raw["item_id"]).astype("int64"),
        "external_id": raw["external_id"].astype(str),
        "position": pd.to_numeric(raw["position"]).astype("int64"),
        "kind": raw["kind"].astype(str),
        "component": raw["component"].astype(str),
        "setup": raw["setup"].astype(str),
        "correct_answer": raw["correct_answer"].astype(str),
        "family": raw["family"].astype(str),
        "instance_id": pd.to_numeric(raw["instance_id"].replace({"": "-1"})).astype("int64"),
        "corpus": raw["corpus"].astype(str),
        "instance_position": pd.to_numeric(raw["instance_position"].replace({"": "-1"})).astype("int64"),
        "published_votes": _to_float(raw["published_votes"]),
    })
    return frame.sort_values(["position", "item_id"], kind="stable").reset_index(drop=True)


def participants_frame(*, study_id: int) -> pd.DataFrame:
    sql = "SELECT id, external_id, platform, excluded FROM annotation_participant WHERE study_id = %s"
    raw = _read_frame(sql, [study_id], ["participant_id", "external_id", "platform", "excluded"])
    return pd.DataFrame({
        "participant_id": pd.to_numeric(raw["participant_id"]).astype("int64"),
        "external_id": raw["external_id"].astype(str),
        "platform": raw["platform"].astype(str),
        "excluded": _to_bool(raw["excluded"]),
    })
