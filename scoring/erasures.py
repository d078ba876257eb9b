"""Whether a computation predates an erasure on request: an agreement run, a filter run or an export made before a
participant of its study was erased holds numbers (or files) that still include that person. They are kept as
evidence, and every door says "computed before n erasures" (core/erasure.py counts; this module says it once for
the admin, the API bodies and the dataset card)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from core.erasure import computed_before_text, erasures_after
from core.models import ErasureTombstone


def record_erasures_since(record: Any) -> int:
    """Erasures that touched the record's study after its data was read (`computed_at` where the record has it,
    else `created_at`). A record over every study (an export without one) counts every later erasure."""
    at: datetime | None = getattr(record, "computed_at", None) or getattr(record, "created_at", None)
    if at is None:
        return 0
    if getattr(record, "study_id", None) is None:
        return ErasureTombstone.objects.filter(erased_at__gt=at).count()
    return erasures_after(study_id=record.study_id, at=at)


def erasures_fields(record: Any) -> dict[str, Any]:
    """The API's two fields: `erasures_since` (n) and `erasures_note` (a sentence, empty when n is 0)."""
    n = record_erasures_since(record)
    note = (f"{computed_before_text(n).capitalize()} on request: it still includes data of people since erased; "
            "compute it again to leave them out." if n else "")
    return {"erasures_since": n, "erasures_note": note}
