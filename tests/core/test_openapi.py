"""The API's documentation: tags per resource, every operation described, researcher endpoints documenting their
own errors (not the participant flow's)."""
from __future__ import annotations

import base64

import pytest
from django.test import Client
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


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_the_docs_and_the_schema_are_for_staff_only(url, client, django_user_model, admin_client) -> None:
    """As the README says: an anonymous visitor and a signed-in user who is not staff are refused; staff see them
    (signed in to the admin, or with Basic credentials)."""
    assert client.get(url).status_code in (401, 403)
    user = django_user_model.objects.create_user("someone", password="pw-someone-1")
    client.force_login(user)
    assert client.get(url).status_code == 403
    assert admin_client.get(url).status_code == 200
    staff = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    basic = base64.b64encode(b"staff:pw-staff-1").decode()
    assert Client().get(url, HTTP_AUTHORIZATION=f"Basic {basic}").status_code == 200 and staff.is_staff
