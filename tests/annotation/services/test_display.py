"""Display helpers: the swap is undone on the way back, and redirects only ever carry an http(s) link."""
from __future__ import annotations

from annotation.models import canonical_answer, displayed_answer, swap_answer
from annotation.services.display import redirect_with_code


def test_a_swapped_display_is_undone_for_storage():
    shown = {"swapped": True}
    assert swap_answer("S1-S2") == "S2-S1"
    assert canonical_answer(shown=shown, displayed="S1-S2") == "S2-S1"
    assert displayed_answer(shown=shown, canonical=canonical_answer(shown=shown, displayed="S1")) == "S1"
    assert canonical_answer(shown={"swapped": False}, displayed="S1-S2") == "S1-S2"


def test_redirect_fills_the_code_and_refuses_mturk_and_non_http_links():
    url = "https://app.prolific.com/submissions/complete?cc={code}"
    assert redirect_with_code(url, "ABC", platform="prolific") == "https://app.prolific.com/submissions/complete?cc=ABC"
    assert redirect_with_code(url, "ABC", platform="mturk") is None
    assert redirect_with_code("javascript:alert(1)", "ABC", platform="prolific") is None
    assert redirect_with_code("", "ABC", platform="prolific") is None
