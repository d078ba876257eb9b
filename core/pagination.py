"""The API's pagination: DRF's limit/offset, with `?limit=` and `?offset=` checked instead of silently replaced.

DRF serves the first page for `?offset=abc` and the default page size for `?limit=-1`; a client with a typo would
read the wrong page without knowing. Here a value that is not a whole number in range is a 400 naming the parameter
(the documented error shape), and the schema says the range (core/openapi.py).
"""
from __future__ import annotations

from typing import Any

from rest_framework import exceptions, pagination
from rest_framework.request import Request

MAX_OFFSET = 2**63 - 1  # PostgreSQL's OFFSET is a bigint


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    max_limit = 1000
    limit_query_description = "Results per page (1 or more; more than 1000 are served as 1000; default 100)."
    offset_query_description = "How many results to skip (0 or more; default 0)."

    def _whole_number(self, request: Request, name: str, minimum: int) -> int | None:
        values = request.query_params.getlist(name)
        if not values:
            return None
        value = values[-1]
        if len(values) > 1 or not value.isascii() or not value.isdigit() or not minimum <= int(value) <= MAX_OFFSET:
            raise exceptions.ValidationError({name: [f"A whole number from {minimum} is required (once)."]})
        return int(value)

    def get_limit(self, request: Request) -> int | None:
        limit = self._whole_number(request, self.limit_query_param, 1)
        return self.default_limit if limit is None else min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return self._whole_number(request, self.offset_query_param, 0) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        ranges = {self.limit_query_param: 1, self.offset_query_param: 0}
        for parameter in parameters:
            parameter["schema"] = {"type": "integer", "minimum": ranges[parameter["name"]], "maximum": MAX_OFFSET}
        return parameters
