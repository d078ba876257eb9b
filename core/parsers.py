"""JSON request bodies held to the types the schema documents (REST_FRAMEWORK's DEFAULT_PARSER_CLASSES).

Kept apart from core/api.py: DRF imports its parser classes while `rest_framework.views` is being set up.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import serializers
from rest_framework.parsers import JSONParser


class JSONObject(dict):
    """A request body that arrived as a JSON object: its values have JSON types, which the fields then hold to
    (`strict_json_types`). Form and multipart bodies (QueryDicts, all text) keep DRF's conversions."""


class StrictJSONParser(JSONParser):
    """JSON bodies (REST_FRAMEWORK's first parser): an object comes back as a `JSONObject`."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        return JSONObject(data) if isinstance(data, dict) else data


def _json_body(field: serializers.Field) -> bool:
    return isinstance(getattr(field.root, "initial_data", None), JSONObject)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# DRF converts what it is given: "1", 1 and "yes" are all `true`, 7 is the text "7", "5" and 5.0 the integer 5. The
# schema documents JSON types (a boolean, an integer, a string), and a client that sends another type has a bug
# that a silent conversion would hide; in a JSON body each field takes only its documented type.
STRICT_JSON_TYPES: tuple[tuple[type, Callable[[Any, Any], bool], str], ...] = (
    (serializers.BooleanField, lambda field, value: isinstance(value, bool), "Must be true or false (a JSON boolean)."),
    (serializers.IntegerField, lambda field, value: isinstance(value, int) and not isinstance(value, bool),
     "Must be a whole number (a JSON number without a fraction, not text)."),
    (serializers.FloatField, lambda field, value: _is_number(value), "Must be a number (a JSON number, not text)."),
    (serializers.CharField, lambda field, value: isinstance(value, str), "Must be text (a JSON string)."),
    (serializers.ChoiceField, lambda field, value: isinstance(value, str) or (
        not isinstance(value, bool) and any(type(key) is type(value) and key == value for key in field.choices)),
     "Must be one of the choices, written as they are listed."),
)


def strict_json_types() -> None:
    """Holds the fields above to their JSON type when the body is a JSON object (CoreConfig.ready); null is left
    to each field's allow_null."""
    for field_class, accepts, message in STRICT_JSON_TYPES:
        if getattr(field_class.to_internal_value, "strict_json", False):
            continue
        field_class.to_internal_value = _strict(field_class.to_internal_value, accepts, message)


def _strict(convert: Callable[..., Any], accepts: Callable[[Any, Any], bool], message: str) -> Callable[..., Any]:
    def to_internal_value(self: serializers.Field, data: Any) -> Any:
        if not accepts(self, data) and _json_body(self):
            raise serializers.ValidationError(message, code="invalid")
        return convert(self, data)

    to_internal_value.strict_json = True  # type: ignore[attr-defined]
    return to_internal_value
