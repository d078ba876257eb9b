"""Raw platform ids swept out of the database: the one machinery behind erasure on request and retention.

`ids_replace` rewrites, in every char, text and JSON column of every model (the model registry walked, so a column an
app forgot is reached too), each raw id of a mapping with its person key. Erasure gives one id and every row
(core/erasure.py); retention gives a study's ids and only the rows linked to the study, then the rows of no study
(platforms/services/retention.py).

An id matches as a whole token: not inside a longer run of ASCII letters and digits, so "P1" never touches "P10" and a
short id never matches inside a word, while punctuation, spaces, quotes and underscores around it (a CSV line, a JSON
string, `bonus_<id>.csv`) still find it. The database narrows each column to rows whose text matches the same rule
(a regex, chunked so a study of thousands of people stays a handful of queries); Python then rewrites strings, lists
and dicts, dict keys included. Core imports no app: the walk goes through django.apps.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.apps import apps
from django.db import models
from django.db.models.functions import Cast

# The characters an id token cannot touch on either side; the Python and SQL patterns are both built from it.
TOKEN_CHARS = "A-Za-z0-9"
# Ids per database regex: long alternations stay well under PostgreSQL's regex size limits.
SQL_CHUNK = 300

RowsOf = Callable[[type[models.Model]], "models.QuerySet[Any] | None"]


def text_columns(model: type[models.Model]) -> list[models.Field]:
    """The columns of a model that can hold an id as text: char, text and JSON fields (choices included: nothing in
    the database keeps a raw id out of them)."""
    return [f for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField) and not f.primary_key]


def swept_models() -> Iterator[type[models.Model]]:
    """Every model with a table of its own that has a text column."""
    for model in apps.get_models():
        meta = model._meta
        if meta.managed and not meta.proxy and text_columns(model):
            yield model


def _alternation(ids: Iterable[str]) -> str:
    # Longest first: of two ids where one begins the other ("P1", "P1-b"), the longer wins.
    return "|".join(re.escape(i) for i in sorted(set(ids), key=lambda i: (-len(i), i)))


def token_pattern(ids: Iterable[str]) -> re.Pattern[str]:
    """Any of `ids` as a whole token (group 1 is the id found)."""
    return re.compile(f"(?<![{TOKEN_CHARS}])({_alternation(ids)})(?![{TOKEN_CHARS}])")


def sql_token_pattern(ids: Iterable[str]) -> str:
    """The same rule as `token_pattern` for the database's regex (PostgreSQL has no look-behind: the neighbours are
    matched, which only narrows rows; Python decides the replacement)."""
    return f"(^|[^{TOKEN_CHARS}])({_alternation(ids)})([^{TOKEN_CHARS}]|$)"


def replacer(mapping: dict[str, str]) -> Callable[[Any], Any]:
    """A function that returns a value (str or bytes, or lists, tuples and dicts of them, keys included) with each raw
    id of `mapping` replaced by its key; other values unchanged."""
    if not mapping:
        return lambda value: value
    pattern = token_pattern(mapping)

    def replace(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: mapping[m.group(1)], value)
        if isinstance(value, bytes):  # a response body
            return replace(value.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")
        if isinstance(value, list):  # a plain list back (DRF's ReturnList cannot be rebuilt without its serializer)
            return [replace(v) for v in value]
        if isinstance(value, tuple):
            return tuple(replace(v) for v in value)
        if isinstance(value, dict):
            return {replace(k): replace(v) for k, v in value.items()}
        return value

    return replace


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), SQL_CHUNK):
        yield ids[start:start + SQL_CHUNK]


def _all_rows(model: type[models.Model]) -> models.QuerySet[Any]:
    return model._default_manager.all()


def _column_rewrite(*, rows: models.QuerySet[Any], column: models.Field, ids: list[str],
                    replace: Callable[[Any], Any], apply: bool) -> set[Any]:
    """The pks of `rows` whose `column` changes; written when `apply`."""
    model, touched = rows.model, set()
    alias = f"_id_sweep_{column.attname}"
    for chunk in _chunks(ids):
        hits = (rows.annotate(**{alias: Cast(column.attname, models.TextField())})
                .filter(**{f"{alias}__regex": sql_token_pattern(chunk)}).values_list("pk", column.attname))
        for pk, value in hits:
            new = replace(value)
            if new == value:
                continue
            touched.add(pk)
            if apply:
                if isinstance(new, str) and getattr(column, "max_length", None):
                    # A key longer than the id it replaces must not make the row unwritable.
                    new = new[:column.max_length]
                model._default_manager.filter(pk=pk).update(**{column.attname: new})
    return touched


def ids_replace(*, mapping: dict[str, str], rows_of: RowsOf | None = None, apply: bool) -> dict[str, int]:
    """In every text and JSON column of the rows `rows_of(model)` gives (None from it: skip the model; no `rows_of`:
    every row of every model), replace each raw id of `mapping` by its person key. Returns the rows changed (a dry
    run: that would change) per model label; a dry run writes nothing."""
    changed: dict[str, int] = {}
    if not mapping:
        return changed
    replace, ids = replacer(mapping), sorted(mapping)
    for model in swept_models():
        rows = (rows_of or _all_rows)(model)
        if rows is None:
            continue
        touched: set[Any] = set()
        for column in text_columns(model):
            touched |= _column_rewrite(rows=rows, column=column, ids=ids, replace=replace, apply=apply)
        if touched:
            changed[model._meta.label] = len(touched)
    return changed
