"""Every API body's parsers (REST_FRAMEWORK's DEFAULT_PARSER_CLASSES): JSON held to the rule of core/json_guard.py
(depth, NUL, numbers) and to the types the schema documents; form and multipart fields held to the NUL rule.

Kept apart from core/api.py: DRF imports its parser classes while `rest_framework.views` is being set up.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import exceptions, serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from core.json_guard import MAX_JSON_DEPTH, JsonRefused, json_check, plain_name


class JSONObject(dict):
    """A request body that arrived as a JSON object: its values have JSON types, which the fields then hold to
    (`strict_json_types`). Form and multipart bodies (QueryDicts, all text) keep DRF's conversions."""


def body_refused(exc: JsonRefused) -> exceptions.APIException:
    """The 400 of a body the rule refuses: too deep a nesting cannot be read (a parse error); a NUL or a number no
    field stores is an error of the field it is in, named as DRF names field errors (`{"filters[0].value": [...]}`)."""
    if exc.problem.startswith("JSON nested deeper"):
        return exceptions.ParseError(exc.problem)
    return exceptions.ValidationError({exc.path or "body": [exc.problem]})


class StrictJSONParser(JSONParser):
    """JSON bodies (REST_FRAMEWORK's first parser): held to core/json_guard.py's rule (a 400 naming the field, never
    the 500 of the parser's recursion or of PostgreSQL refusing a NUL); an object comes back as a `JSONObject`."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            data = json_check(super().parse(stream, media_type, parser_context))
        except RecursionError:
            raise exceptions.ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels.") from None
        except JsonRefused as exc:
            raise body_refused(exc) from None
        return JSONObject(data) if isinstance(data, dict) else data


def _fields_checked(fields: Any) -> None:
    """A form's or multipart body's text fields: a NUL in a name or a value is refused, naming the field."""
    for name, values in fields.lists():
        if "\x00" in name:
            raise body_refused(JsonRefused("a field name must not hold a NUL character (\\u0000)."))
        for value in values:
            if isinstance(value, str) and "\x00" in value:
                raise body_refused(JsonRefused("text must not hold a NUL character (\\u0000).", plain_name(name)))


class GuardedFormParser(FormParser):
    """Form bodies: every field held to the NUL rule (a JSON-typed field given as form text would otherwise carry
    it to PostgreSQL)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        _fields_checked(data)
        return data


class GuardedMultiPartParser(MultiPartParser):
    """Multipart bodies: the text fields held to the NUL rule (files are read by their own importers)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        parsed = super().parse(stream, media_type, parser_context)
        _fields_checked(parsed.data)
        return parsed


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
