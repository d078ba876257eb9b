"""The one rule for JSON from outside (core/json_guard.py): depth, NUL characters, numbers; where it is named."""
from __future__ import annotations

import json

import pytest

from core.errors import ApplicationError
from core.json_guard import MAX_JSON_DEPTH, JsonRefused, json_check, json_object_read, json_parse


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_thirty_two_levels_pass_and_the_thirty_third_is_refused() -> None:
    assert json_parse(_nested(MAX_JSON_DEPTH)) is not None
    with pytest.raises(JsonRefused, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        json_parse(_nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(JsonRefused, match="deeper than"):  # far past the parser's recursion: still a refusal
        json_parse("[" * 100_000)


@pytest.mark.parametrize(("value", "path", "problem"), [
    ({"filters": [{"selected_range": {"lower": "1\x008"}}]}, "filters[0].selected_range.lower", "NUL"),
    ({"allow_list": {"participants": ["ok", "a\x00"]}}, "allow_list.participants[1]", "NUL"),
    ({"a": {"b\x00": 1}}, "a", "key must not hold a NUL"),
    ({"seed": float("inf")}, "seed", "not finite"),
    ({"seed": 10**400}, "seed", "whole number beyond"),
    ({"<script>": "\x00"}, "?", "NUL"),  # a key that is not a plain name is never repeated
])
def test_a_refusal_names_where_it_is(value: object, path: str, problem: str) -> None:
    with pytest.raises(JsonRefused) as refused:
        json_check(value)
    assert refused.value.path == path and problem in refused.value.message
    assert "<script>" not in refused.value.message


def test_what_the_rule_lets_through_is_returned_unchanged() -> None:
    value = {"text": "brackets [[{{ in a string", "n": -(2**63 - 1), "x": 1.5e300, "ok": [True, None]}
    assert json_check(value) is value
    assert json_parse(json.dumps(value)) == value


def test_an_admin_view_s_body_is_an_application_error_naming_the_field() -> None:
    with pytest.raises(ApplicationError) as refused:
        json_object_read(b'{"reason_text": "a\\u0000b"}', shape="{reason_text}")
    assert refused.value.field == "reason_text" and refused.value.status == 400
    with pytest.raises(ApplicationError, match=r"expected a JSON object \{reason_text\}"):
        json_object_read(b"[1]", shape="{reason_text}")
    with pytest.raises(ApplicationError, match="expected a JSON object"):
        json_object_read(b"{not json", shape="{reason_text}")
    assert json_object_read(b"", shape="{}") == {}
