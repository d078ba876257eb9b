"""The one rule for JSON that arrives from outside: every API body (core/parsers.py), every admin view or form that
reads JSON (`json_parse`; every model JSONField's admin box, core/admin/site.py `PrettyJSONFormField`), every JSON
file a command reads (core/commands.py `json_file_read`).

A value is refused, naming where in it (`filters[0].value`), when it
- is nested deeper than MAX_JSON_DEPTH arrays and objects (a deeper body costs the parser's recursion: a 500);
- holds a NUL character (U+0000) in a string or a key: PostgreSQL stores no NUL in text or jsonb, and such text
  is never meant for a participant's screen;
- holds a number no field stores: not finite (`1e400` parses as infinity) or a whole number beyond the database's
  64-bit range (`10**400`).
No database, no framework: the doors turn `JsonRefused` into their own 400, form error or exit status
(`json_object_read`: an admin view's JSON body, an `ApplicationError`).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from core.errors import ApplicationError

MAX_JSON_DEPTH = 32
MAX_WHOLE_NUMBER = 2**63 - 1  # PostgreSQL's bigint, the widest integer column
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")


class JsonRefused(ValueError):
    """A JSON value the rule refuses: `path` says where (empty: the whole value), `message` what and where."""

    def __init__(self, problem: str, path: str = "") -> None:
        self.path = path
        self.problem = problem
        self.message = f"{path}: {problem}" if path else problem
        super().__init__(self.message)


def plain_name(key: Any) -> str:
    """A key as an error may name it: keys come from the request, and only a plain name is repeated in the answer
    (errors never echo the input); anything else is `?`."""
    return key if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) else "?"


def _path(base: str, trail: tuple | None) -> str:
    """The place a trail of keys leads to, written as DRF names fields (`filters[0].value`): built only for an
    error, so that a large body that passes costs no strings."""
    keys: list[Any] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    path = base
    for key in reversed(keys):
        if isinstance(key, int):
            path = f"{path}[{key}]"
        else:
            path = f"{path}.{plain_name(key)}" if path else plain_name(key)
    return path


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return "text must not hold a NUL character (\\u0000)." if "\x00" in value else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -MAX_WHOLE_NUMBER <= value <= MAX_WHOLE_NUMBER else \
            f"a whole number beyond ±{MAX_WHOLE_NUMBER} (no field stores it)."
    if isinstance(value, float) and not math.isfinite(value):
        return "a number too large to store (not finite)."
    return None


def json_check(value: Any, *, path: str = "") -> Any:
    """`value` (parsed JSON: dicts, lists, strings, numbers, booleans, None) when the rule holds; else `JsonRefused`
    naming a place that breaks it. Iterative, so a deep value costs no recursion."""
    if not isinstance(value, (dict, list)):
        problem = _scalar_problem(value)
        if problem:
            raise JsonRefused(problem, path)
        return value
    stack: list[tuple[Any, int, tuple | None]] = [(value, 0, None)]
    while stack:
        node, depth, trail = stack.pop()
        if depth >= MAX_JSON_DEPTH:
            raise JsonRefused(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.", _path(path, trail))
        for key, child in (node.items() if isinstance(node, dict) else enumerate(node)):
            if isinstance(key, str) and "\x00" in key:
                raise JsonRefused("a key must not hold a NUL character (\\u0000).", _path(path, trail))
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, (trail, key)))
            elif isinstance(child, str):
                if "\x00" in child:
                    raise JsonRefused("text must not hold a NUL character (\\u0000).", _path(path, (trail, key)))
            elif child is not None:
                problem = _scalar_problem(child)
                if problem:
                    raise JsonRefused(problem, _path(path, (trail, key)))
    return value


def json_parse(raw: bytes | str) -> Any:
    """JSON text parsed and checked: `json.JSONDecodeError` (a ValueError) for text that is not JSON, `JsonRefused`
    for JSON the rule refuses (too deep a nesting is refused whether or not the parser's recursion reaches it)."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise JsonRefused(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.") from None
    return json_check(data)


def json_object_read(raw: bytes | str, *, shape: str) -> dict[str, Any]:
    """The JSON object an admin view reads from a request body (`shape` says what it holds, for the error): an
    `ApplicationError` (a 400, the field named) for anything else, or for JSON the rule refuses."""
    try:
        data = json_parse(raw or b"{}")
    except JsonRefused as exc:
        raise ApplicationError(exc.message, field=exc.path or None) from None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ApplicationError(f"expected a JSON object {shape}.")
    return data
