"""Signal thresholds: names and ranges checked, the CLI's NAME=VALUE form parsed, defaults filled in."""
from __future__ import annotations

import pytest

from annotation.services.writing_signals.registry import thresholds_parse, thresholds_resolve, thresholds_validate
from core.errors import ApplicationError


def test_unknown_names_and_non_numbers_are_refused():
    assert thresholds_validate(None) == {}
    with pytest.raises(ApplicationError, match="unknown name"):
        thresholds_validate({"no_such_signal": 1})
    with pytest.raises(ApplicationError, match="NAME=VALUE"):
        thresholds_parse(["mostly_pasted"])


def test_off_switches_a_signal_off_and_resolve_keeps_it_off():
    parsed = thresholds_parse(["mostly_pasted=off"])
    assert parsed == {"mostly_pasted": None}
    resolved = thresholds_resolve(parsed)
    assert resolved["mostly_pasted"] is None and len(resolved) > 1
