"""The OpenAPI schema tells the truth about every operation, without each view repeating it.

- `AutoSchema` (REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS): request bodies are documented in the one encoding whose
  types survive the trip, JSON (multipart only where a view reads files); `?limit`/`?offset` as
  `core.pagination.LimitOffsetPagination` checks them.
- `errors_and_tags` (a drf-spectacular postprocessing hook): one tag per resource, and every operation documents
  each error status it can answer with the one error body (`Error`, `core/api.py`), so that a view written later
  gets them without a decorator.

`tests/core/test_api_schema.py` runs schemathesis against a live server to hold the schema to the server's
answers (docs/api-schema.md).
"""
from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import serializers

PARTICIPANT_MARKERS = ("/sessions/", "/ping/")
TAGS = {"components": "corpora", "corpora": "corpora", "instances": "instances", "studies": "studies",
        "sessions": "participant sessions", "ping": "health", "agreement-runs": "agreement",
        "filter-runs": "filters", "exports": "exports", "score-runs": "score runs",
        "metric-evaluations": "metric evaluations", "jobs": "jobs"}
TAG_DESCRIPTIONS = {
    "participant sessions": "The annotator's flow (no login: the session token is the credential); see "
                            "docs/annotator-api.md.",
    "health": "Trivial endpoints on the participant stack (load tests).",
}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
JSON = "application/json"
WRITE_METHODS = ("post", "put", "patch", "delete")

# What each error status means on a researcher endpoint (a view's own description of a status wins).
RESEARCHER_ERRORS = {
    "400": "Invalid input: the message names the field and the problem in plain words; `details.field` names it "
           "(`details.<field>` where the serializer refused it).",
    "403": "Not signed in as staff with the model permission this needs (the same permission the admin asks for).",
    "404": "No such record: the one the path names, or one the body or query names.",
    "409": "Conflicts with the current state (a name already taken, a record in the wrong state, nothing to work "
           "on).",
    "429": "Too many failed sign-ins from this address (Basic auth): `Retry-After` says when to try again.",
}
# An operation with a credential of its own (a webhook's signature) refuses it with this 403.
OWN_CREDENTIAL_REFUSED = "The request's own credential (its signature) does not hold."
# The participant flow's answers (annotation/api/sessions.py documents them per operation; these fill the gaps).
PARTICIPANT_ERRORS = {
    "400": "Invalid body or answer: the message names the field.",
    "404": "Unknown session token or study, or an item not reserved for this session.",
    "409": "Wrong state for this step (or a different answer to an answered item).",
    "410": "The batch's time limit has passed.",
    "413": "Body larger than PARTICIPANT_MAX_BODY_BYTES.",
}


class AutoSchema(SpectacularAutoSchema):
    def map_parsers(self) -> list[str]:
        """JSON when the view reads JSON: form encodings cannot tell `null`, `false`, a number or a list from a
        string, so a body that is valid in them is not the body the view validates. Multipart only for uploads."""
        media_types = super().map_parsers()
        if JSON in media_types:
            return [JSON]
        return [media for media in media_types if media == "multipart/form-data"] or media_types

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction == "request" and isinstance(schema, dict) and "$ref" not in schema:
            _as_validated(field, schema)
        return schema


def _as_validated(field: serializers.Field, schema: dict[str, Any]) -> None:
    """What DRF checks beyond drf-spectacular's mapping, in a request body."""
    if isinstance(field, serializers.SlugField) and "pattern" not in schema:
        letters = r"[-\w]" if field.allow_unicode else "[-a-zA-Z0-9_]"
        schema["pattern"] = f"^{letters}{'*' if field.allow_blank else '+'}$"
    if isinstance(field, serializers.CharField) and schema.get("type") == "string":
        if "pattern" in schema:
            # Python's `$` also matches before a final newline; Django's validators use `\Z`.
            if schema["pattern"].endswith("$") and not schema["pattern"].endswith("\\$"):
                schema["pattern"] += r"(?!\n)"
        elif field.allow_blank or not field.trim_whitespace:
            schema["pattern"] = NO_NUL  # DRF refuses NUL characters in text
        else:
            schema["pattern"] = NO_NUL_NOT_BLANK  # and strips spaces before the blank check
    if isinstance(field, serializers.DecimalField) and schema.get("type") == "string":
        # drf-spectacular's pattern lets the empty string through; DRF needs a digit.
        whole = "+" if field.max_digits is None else f"{{1,{field.max_digits - (field.decimal_places or 0)}}}"
        fraction = "+" if field.decimal_places is None else f"{{1,{field.decimal_places}}}"
        sign = "" if field.min_value is not None and field.min_value >= 0 else "-?"
        schema["pattern"] = rf"^{sign}\d{whole}(?:\.\d{fraction})?$"
    if isinstance(field, (serializers.ListField, serializers.MultipleChoiceField)) and not field.allow_empty:
        schema.setdefault("minItems", 1)
    if isinstance(field, serializers.JSONField) and not field.allow_null and not schema.get("type"):
        schema.setdefault("anyOf", ANY_BUT_NULL)


NO_NUL = r"^[^\x00]*$"
NO_NUL_NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
ANY_BUT_NULL = [{"type": kind} for kind in ("object", "array", "string", "number", "boolean")]


def _is_participant(path: str) -> bool:
    return any(marker in path for marker in PARTICIPANT_MARKERS) or path.endswith("/sessions/")


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": ERROR_REF}}}


def _signs_in(operation: dict[str, Any]) -> bool:
    """Whether the operation takes the staff's sign-in (session or Basic auth), not a credential of its own (a
    webhook's signature)."""
    return any(scheme for scheme in operation.get("security", []))


def _researcher_statuses(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """The error statuses a researcher operation can answer, from what it takes."""
    statuses = ["403", "429"] if _signs_in(operation) else ["403"]
    takes_input = "requestBody" in operation or any(p.get("in") == "query" for p in operation.get("parameters", []))
    if takes_input or method in WRITE_METHODS:  # a service refuses with a 400 unless it says otherwise
        statuses.append("400")
    if "{" in path or "requestBody" in operation:
        statuses.append("404")
    if method in WRITE_METHODS:
        statuses.append("409")
    return statuses


def _document_errors(path: str, method: str, operation: dict[str, Any], participant: bool) -> None:
    responses = operation.setdefault("responses", {})
    if participant:
        if path.startswith("/api/v1/ping/"):
            return
        for code, description in PARTICIPANT_ERRORS.items():
            responses.setdefault(code, _error(description))
        return
    for code in ("410",):  # the participant flow's state, never a researcher answer
        responses.pop(code, None)
    signs_in = _signs_in(operation)
    for code in _researcher_statuses(path, method, operation):
        description = OWN_CREDENTIAL_REFUSED if code == "403" and not signs_in else RESEARCHER_ERRORS[code]
        if (code == "403" and signs_in) or code not in responses:
            responses[code] = _error(description)
        elif not responses[code].get("description"):
            responses[code]["description"] = description
    for code, response in responses.items():
        if code.startswith(("4", "5")):
            response["content"] = {JSON: {"schema": ERROR_REF}}


def errors_and_tags(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    for path, operations in result.get("paths", {}).items():
        segment = path.removeprefix("/api/v1/").split("/", 1)[0]
        participant = _is_participant(path)
        tag = "participant sessions" if participant and segment == "studies" else TAGS.get(segment, segment)
        for method, operation in operations.items():
            operation["tags"] = [tag]
            _document_errors(path, method, operation, participant)
    result["tags"] = [{"name": name, **({"description": TAG_DESCRIPTIONS[name]} if name in TAG_DESCRIPTIONS else {})}
                      for name in sorted(set(TAGS.values()))]
    return result
