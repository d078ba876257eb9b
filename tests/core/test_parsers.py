"""JSON bodies are held to their documented types (core/parsers.py); form bodies keep DRF's conversions."""
from __future__ import annotations

import pytest
from django.http import QueryDict
from rest_framework import serializers

from core.parsers import JSONObject
from tests.factories import CorpusFactory
from tests.helpers import assert_api_error


class Example(serializers.Serializer):
    flag = serializers.BooleanField(required=False)
    count = serializers.IntegerField(required=False)
    ratio = serializers.FloatField(required=False)
    name = serializers.CharField(required=False)
    kind = serializers.ChoiceField(choices=["a", "b"], required=False)
    level = serializers.ChoiceField(choices=[1, 2], required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("flag", "true", "Must be true or false (a JSON boolean)."),
    ("flag", 1, "Must be true or false (a JSON boolean)."),
    ("count", "5", "Must be a whole number (a JSON number without a fraction, not text)."),
    ("count", 5.0, "Must be a whole number (a JSON number without a fraction, not text)."),
    ("count", True, "Must be a whole number (a JSON number without a fraction, not text)."),
    ("ratio", "1.5", "Must be a number (a JSON number, not text)."),
    ("ratio", False, "Must be a number (a JSON number, not text)."),
    ("name", 7, "Must be text (a JSON string)."),
    ("kind", 1, "Must be one of the choices, written as they are listed."),
    ("level", True, "Must be one of the choices, written as they are listed."),
    ("tags", ["x", 3], "Must be text (a JSON string)."),
])
def test_a_json_body_takes_only_the_documented_type(field, value, message):
    serializer = Example(data=JSONObject({field: value}))
    assert not serializer.is_valid()
    errors = serializer.errors[field]
    assert (errors[1] if isinstance(errors, dict) else errors) == [message]


def test_the_documented_types_pass_and_null_is_left_to_allow_null():
    data = {"flag": False, "count": 5, "ratio": 2, "name": "x", "kind": "a", "level": 2, "tags": ["x"]}
    serializer = Example(data=JSONObject(data))
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data == {**data, "ratio": 2.0}
    serializer = Example(data=JSONObject({"name": None}))
    assert not serializer.is_valid() and serializer.errors["name"] == ["This field may not be null."]


def test_form_bodies_and_plain_dicts_keep_drfs_conversions():
    form = QueryDict("flag=true&count=5&ratio=1.5&name=7&kind=a&level=1")
    serializer = Example(data=form)
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data == {"flag": True, "count": 5, "ratio": 1.5, "name": "7", "kind": "a", "level": 1}
    assert Example(data={"count": "5"}).is_valid()


@pytest.mark.django_db
def test_the_api_refuses_a_number_sent_as_text_and_names_the_field(api):
    corpus = CorpusFactory()
    response = api.post(f"/api/v1/corpora/{corpus.pk}/generate/", {"setup": "quadruple", "seed": "1"}, format="json")
    error = assert_api_error(response, code="invalid", status=400)
    assert error["details"] == {"seed": ["Must be a whole number (a JSON number without a fraction, not text)."]}
