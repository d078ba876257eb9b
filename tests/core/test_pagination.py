"""`?limit=` and `?offset=` are checked, not silently replaced (core/pagination.py)."""
from __future__ import annotations

import pytest

from tests.factories import TaskInstanceFactory
from tests.helpers import assert_api_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("query", ["offset=abc", "offset=-1", "offset=1.5", "limit=0", "limit=-3", "limit=x",
                                   "offset=1&offset=2", f"offset={2**63}", "limit=%EF%BC%95"])
def test_a_page_parameter_that_is_not_a_whole_number_in_range_is_a_400_naming_it(api, query):
    error = assert_api_error(api.get(f"/api/v1/instances/?{query}"), code="invalid", status=400)
    assert set(error["details"]) == {query.split("=")[0]}


def test_valid_parameters_page_through_the_results(api):
    TaskInstanceFactory.create_batch(3)
    first = api.get("/api/v1/instances/?limit=2").json()
    assert first["count"] == 3 and len(first["results"]) == 2 and "offset=2" in first["next"]
    rest = api.get("/api/v1/instances/?limit=2&offset=2").json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    assert len(api.get("/api/v1/instances/?limit=5000").json()["results"]) == 3  # served as at most 1000
