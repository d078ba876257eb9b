"""The corpus format registry: every format by name, unknown names refused with the list."""
from __future__ import annotations

import pytest

from core.errors import ApplicationError
from tasks.services.corpus_formats import CORPUS_FORMATS, FORMATS, corpus_format_get


def test_each_format_is_found_by_its_name():
    assert set(FORMATS) == {"aligned", "turkcorpus", "pairs", "stel"}
    assert corpus_format_get("aligned").files_by_role and corpus_format_get("stel").rows == "instances"
    assert all(corpus_format_get(name) is spec for name, spec in CORPUS_FORMATS.items())


def test_an_unknown_format_is_refused_naming_the_known_ones():
    with pytest.raises(ApplicationError, match="aligned, turkcorpus, pairs, stel"):
        corpus_format_get("xlsx")
