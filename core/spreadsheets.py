"""CSV cells that a spreadsheet would run as a formula (OWASP "CSV injection"): text beginning with = + - @, a tab
or a carriage return is prefixed with a single quote. Numbers stay numbers. Only for CSV meant for people;
machine formats (the STEL TSV, JSONL, Parquet) stay byte-exact."""
from __future__ import annotations

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
