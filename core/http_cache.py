"""Files drawn once and served many times (plots): kept by the browser and revalidated, never fetched again whole.

The response carries an ETag (from what the file was drawn from) and Last-Modified, and `Cache-Control: private,
no-cache`: the browser keeps the file (private: it is behind a permission) and asks each time whether it changed;
an unchanged file is a 304 without a body, and without drawing or reading it. Call it after the permission check."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

CACHE_CONTROL = "private, no-cache"


def revalidated_response(request: HttpRequest, *, key: str, modified: datetime | None, content_type: str,
                         render: Callable[[], bytes]) -> HttpResponse:
    """`render()`'s bytes, or 304 when the browser's copy (If-None-Match / If-Modified-Since) is current. `key`
    names the file's content exactly (e.g. the run, its computation time, the plot and its format)."""
    etag = f'"{hashlib.sha256(key.encode()).hexdigest()[:32]}"'
    timestamp = int(modified.timestamp()) if modified else None
    response = get_conditional_response(request, etag=etag, last_modified=timestamp)
    if response is None:
        response = HttpResponse(render(), content_type=content_type)
    response["ETag"] = etag
    if timestamp is not None:
        response["Last-Modified"] = http_date(timestamp)
    response["Cache-Control"] = CACHE_CONTROL
    return response
