"""The schemathesis test's hostile-body phase: for every operation of the OpenAPI schema that takes a body, the
bodies an attacker sends (deep nesting, a NUL in every string position, numbers no field stores, very long strings),
built from the schema itself, so that an operation added later is probed too. Deterministic: no randomness."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

DEEP = b"[" * 100_000  # the attack run's body: 100,000 nested arrays
NUL = "a\u0000b"
HUGE = {"1e400": b"1e400", "10**400": b"1" + b"0" * 400}  # written raw: json.dumps cannot write either
LONG = "x" * 100_000  # beyond every bounded field and the participant body limit (32 KiB)


@dataclass(frozen=True)
class Probe:
    """One hostile request: `refused` says it must answer a 4xx (a long string may be stored where the field has no
    bound; it must only never be a 5xx)."""

    operation: str
    what: str
    content_type: str
    body: bytes
    refused: bool = True


def body_operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if isinstance(operation, dict) and "requestBody" in operation:
                yield method.upper(), path, operation


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    for _ in range(10):
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        elif node.get("allOf"):
            node = node["allOf"][0]
        else:
            break
    return node


def _kind(schema: dict[str, Any], prop: dict[str, Any]) -> str:
    prop = _resolve(schema, prop)
    kind = prop.get("type")
    if kind is None and prop.get("enum"):
        return "string"
    return kind if isinstance(kind, str) else "any"


def _properties(schema: dict[str, Any], operation: dict[str, Any], media: str) -> dict[str, str]:
    body = _resolve(schema, operation["requestBody"]["content"][media].get("schema", {}))
    return {name: _kind(schema, prop) for name, prop in sorted(body.get("properties", {}).items())}


def _json_probes(label: str, properties: dict[str, str]) -> Iterator[Probe]:
    json_type = "application/json"
    yield Probe(label, "deep nesting", json_type, DEEP)
    texts = [name for name, kind in properties.items() if kind in ("string", "any")]
    if texts:  # one body with every text very long: what a bound (or its absence) does is the same for each
        yield Probe(label, "every text long", json_type, json.dumps(dict.fromkeys(texts, LONG)).encode(),
                    refused=False)
    for name, kind in properties.items():
        key = json.dumps(name)
        if kind in ("string", "any"):
            yield Probe(label, f"NUL in {name}", json_type, json.dumps({name: NUL}).encode())
        if kind in ("integer", "number", "any"):
            for text, raw in HUGE.items():
                yield Probe(label, f"{text} in {name}", json_type, b"{" + key.encode() + b": " + raw + b"}")
        if kind in ("array", "any"):
            yield Probe(label, f"NUL in {name}[0]", json_type, json.dumps({name: [NUL]}).encode())
        if kind in ("object", "any"):
            yield Probe(label, f"NUL in {name}.k and in a key", json_type,
                        json.dumps({name: {"k": NUL, NUL: 1}}).encode())


def _form_probes(label: str, properties: dict[str, str]) -> Iterator[Probe]:
    boundary = "hostile-boundary"
    content_type = f"multipart/form-data; boundary={boundary}"
    def form(fields: dict[str, str]) -> bytes:
        parts = "".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                        for name, value in fields.items())
        return f"{parts}--{boundary}--\r\n".encode()

    if properties:
        yield Probe(label, "every field long", content_type, form(dict.fromkeys(properties, LONG)), refused=False)
    for name in properties:
        yield Probe(label, f"NUL in {name}", content_type, form({name: NUL}))


def probes(schema: dict[str, Any]) -> Iterator[Probe]:
    """Every operation with a body: JSON probes where it takes JSON, multipart probes where it takes only form
    data (file uploads)."""
    for method, path, operation in body_operations(schema):
        label = f"{method} {path}"
        content = operation["requestBody"]["content"]
        if "application/json" in content:
            yield from _json_probes(label, _properties(schema, operation, "application/json"))
        elif "multipart/form-data" in content:
            yield from _form_probes(label, _properties(schema, operation, "multipart/form-data"))
