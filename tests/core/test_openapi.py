"""The API's documentation: tags per resource, every operation described, researcher endpoints documenting their
own errors (not the participant flow's)."""
from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def test_tags_per_resource_and_every_operation_described(schema):
    tags = {tag for _, _, op in _operations(schema) for tag in op["tags"]}
    assert {"corpora", "studies", "participant sessions", "agreement", "filters", "exports", "score runs",
            "metric evaluations", "jobs"} <= tags
    undescribed = [f"{m.upper()} {p}" for p, m, op in _operations(schema)
                   if not (op.get("description") or op.get("summary"))]
    assert undescribed == []


def test_researcher_endpoints_document_their_own_errors(schema):
    for path, method, op in _operations(schema):
        if op["tags"] == ["participant sessions"] or op["tags"] == ["health"]:
            continue
        responses = op["responses"]
        if not any(op.get("security", [])):  # a credential of its own (the platform webhook's signature)
            assert "signature" in responses["403"]["description"] and "429" not in responses, (method, path)
            continue
        assert "403" in responses and "model permission" in responses["403"]["description"], (method, path)
        assert responses["403"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
        assert "410" not in responses and "screened out" not in str(responses), (method, path)
        if method == "post":
            assert "400" in responses, (method, path)
