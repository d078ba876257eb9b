"""drf-spectacular postprocessing: one tag per resource, and each researcher endpoint documents its own errors
(the participant endpoints keep theirs, set in annotation/api.py)."""
from __future__ import annotations

from typing import Any

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


def _is_participant(path: str) -> bool:
    return any(marker in path for marker in PARTICIPANT_MARKERS) or path.endswith("/sessions/")


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def researcher_errors_and_tags(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    for path, operations in result.get("paths", {}).items():
        segment = path.removeprefix("/api/v1/").split("/", 1)[0]
        participant = _is_participant(path)
        tag = "participant sessions" if participant and segment == "studies" else TAGS.get(segment, segment)
        for method, operation in operations.items():
            operation["tags"] = [tag]
            if participant:
                continue
            responses = operation.setdefault("responses", {})
            for code in ("409", "410"):  # the participant flow's states, not researcher answers
                if code in responses and "conflicts" not in responses[code].get("description", ""):
                    responses.pop(code)
            responses["403"] = _error("Not signed in as staff with the model permission this needs "
                                      "(the same permission the admin asks for).")
            if "{" in path:
                responses["404"] = _error("No such record.")
            if method in ("post", "put", "patch"):
                responses.setdefault("400", _error(
                    "Invalid input: the message names the field and the problem in plain words; "
                    "`details.field` names it (`details.<field>` where the serializer refused it)."))
    result["tags"] = [{"name": name, **({"description": TAG_DESCRIPTIONS[name]} if name in TAG_DESCRIPTIONS else {})}
                      for name in sorted(set(TAGS.values()))]
    return result
